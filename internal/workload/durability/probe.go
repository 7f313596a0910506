package durability

import (
	"sync"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
)

// freezeProbe takes a phase probe's closing reading just before the kill,
// while the server's processes and counters still exist, and hands it to
// the phase when the engine ends it. A reading after the kill would find
// no processes, or the restarted server's fresh counters.
type freezeProbe struct {
	inner load.Probe

	mu     sync.Mutex
	begun  bool
	frozen bool
	snap   metrics.Phase
}

func (f *freezeProbe) Begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inner.Begin()
	f.begun = true
}

// freeze takes the closing reading; ops is the phase's operation count so
// far (the per-op figures are recomputed at End with the final count).
func (f *freezeProbe) freeze(ops int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.begun || f.frozen {
		return
	}
	f.snap.Ops = ops
	f.inner.End(&f.snap)
	f.frozen = true
}

func (f *freezeProbe) End(ph *metrics.Phase) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.frozen {
		f.inner.End(ph)
		return
	}
	ph.Warnings = append(ph.Warnings, f.snap.Warnings...)
	if s := f.snap.Server; s != nil {
		c := *s
		c.CPUUsPerOp, c.WritePerOp, c.DeviceWritePerOp = 0, 0, 0
		if ph.Ops > 0 {
			c.CPUUsPerOp = c.CPUS * 1e6 / float64(ph.Ops)
			c.WritePerOp = float64(c.WriteBytes) / float64(ph.Ops)
			c.DeviceWritePerOp = float64(c.DeviceWriteBytes) / float64(ph.Ops)
		}
		ph.Server = &c
	}
	if s := f.snap.ServerTime; s != nil {
		c := *s
		c.PerCallUs, c.ClientOverheadUs = 0, 0
		var failed int64
		for _, n := range ph.Errors {
			failed += n
		}
		if calls := ph.Ops/int64(max(ph.OpsPerCall, 1)) - failed; calls > 0 {
			c.PerCallUs = c.MeanUs * float64(c.Calls) / float64(calls)
			c.ClientOverheadUs = ph.LatencyUs.Mean - c.PerCallUs
		}
		ph.ServerTime = &c
	}
}
