package target

import (
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
)

// Probe returns an observer of a phase's measured part: it charges a managed
// server's CPU, memory and disk writes to the phase and records on which
// CPUs client and server ran (storebench cannot see the processes of
// external and in-process targets), and adds the server's
// own execution time when the store reads it (store.ServerTimer, managed or
// external). nil when there is nothing to observe.
func (i *Instance) Probe(string) load.Probe {
	var ps probes
	if !i.args.NoHiccup {
		// First: its window encloses the others' and its End, last, sees
		// the client CPU the engine measured.
		ps = append(ps, &hiccupProbe{serverCPUs: i.args.CPUs})
	}
	// Begin runs in order and End in reverse: the server-time queries fall
	// outside the /proc window, so their cost is not charged to the phase.
	if st, ok := i.Store.(store.ServerTimer); ok {
		ps = append(ps, &timeProbe{st: st})
	}
	if rs, ok := i.Store.(store.Replicated); ok {
		// Before the node counts: its catch-up wait is no phase's.
		ps = append(ps, &replicaProbe{rs: rs, interval: metrics.ReplicaLagIntervalMs * time.Millisecond})
	}
	if nc, ok := i.Store.(store.NodeCounter); ok {
		ps = append(ps, &nodeProbe{nc: nc})
	}
	switch {
	case i.Server != nil:
		// Last, so it begins right before the measured ops and ends first.
		ps = append(ps, &serverProbe{srv: i.Server}, &placementProbe{srv: i.Server})
	case i.Cluster != nil:
		ps = append(ps, &serverProbe{srv: i.Cluster})
	}
	switch len(ps) {
	case 0:
		return nil
	case 1:
		return ps[0]
	}
	return ps
}

// statser is a managed server's or cluster's resource use (Stats).
type statser interface {
	Stats() (server.ProcStats, error)
}

type serverProbe struct {
	srv    statser
	before server.ProcStats
	ok     bool
	// companion: the cost goes to Phase.Companion, not Phase.Server.
	companion bool
}

// Beside adds to main's probes one of i's server as the phase's companion
// (Phase.Companion): i runs beside the cell's own target.
func (i *Instance) Beside(main func(string) load.Probe) func(string) load.Probe {
	return func(phase string) load.Probe {
		var ps probes
		if main != nil {
			if p := main(phase); p != nil {
				ps = append(ps, p)
			}
		}
		switch {
		case i.Server != nil:
			ps = append(ps, &serverProbe{srv: i.Server, companion: true})
		case i.Cluster != nil:
			ps = append(ps, &serverProbe{srv: i.Cluster, companion: true})
		}
		return ps
	}
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
	if p.companion {
		ph.Companion = c
		return
	}
	ph.Server = c
}

// placementProbe records where the client's and the server's threads ran
// (metrics.Placement): on a small machine, sharing a CPU or not changes a
// loopback round trip several times over.
type placementProbe struct {
	srv *server.Server
	s   *metrics.PlacementSampler
}

func (p *placementProbe) Begin() { p.s = metrics.StartPlacement(p.srv.SamplePIDs) }

func (p *placementProbe) End(ph *metrics.Phase) {
	ph.Placement = p.s.Stop()
	p.s = nil
}

// sub guards against counters that went backwards (a backend exited and its
// I/O was not carried to its parent).
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
