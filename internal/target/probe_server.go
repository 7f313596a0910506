package target

import (
	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
)

// Probe returns an observer that charges the managed server's CPU, memory and
// disk writes over a phase's measured part to that phase; nil when storebench
// cannot see the server's processes (external and in-process targets).
func (i *Instance) Probe(string) load.Probe {
	if i.Server == nil {
		return nil
	}
	return &serverProbe{srv: i.Server}
}

type serverProbe struct {
	srv    *server.Server
	before server.ProcStats
	ok     bool
}

func (p *serverProbe) Begin() {
	var err error
	p.before, err = p.srv.Stats()
	p.ok = err == nil
}

func (p *serverProbe) End(ph *metrics.Phase) {
	after, err := p.srv.Stats()
	if !p.ok || err != nil {
		ph.Warnings = append(ph.Warnings, "server resource use not measured: the server's /proc entries could not be read")
		return
	}
	c := &metrics.ServerCost{
		CPUS:         after.CPUSeconds - p.before.CPUSeconds,
		RSSBytes:     after.PSSBytes,
		PeakRSSBytes: after.PeakRSSBytes,
		WriteBytes:   sub(after.WriteBytes, p.before.WriteBytes),
		ReadBytes:    sub(after.ReadBytes, p.before.ReadBytes),
		Processes:    after.Processes,
		Device:       after.Device,
		CPUCoarse:    after.CPUCoarse || p.before.CPUCoarse,
	}
	if after.Device != "" && after.Device == p.before.Device {
		c.DeviceWriteBytes = sub(after.DeviceWriteBytes, p.before.DeviceWriteBytes)
	}
	if c.RSSBytes == 0 {
		c.RSSBytes = after.RSSBytes
	}
	if ph.Ops > 0 {
		c.CPUUsPerOp = c.CPUS * 1e6 / float64(ph.Ops)
		c.WritePerOp = float64(c.WriteBytes) / float64(ph.Ops)
		c.DeviceWritePerOp = float64(c.DeviceWriteBytes) / float64(ph.Ops)
	}
	ph.Server = c
}

// sub guards against counters that went backwards (a backend exited and its
// I/O was not carried to its parent).
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
