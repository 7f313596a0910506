package target

import (
	"fmt"
	"slices"

	"github.com/storebench/storebench/internal/hiccup"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
)

// hiccupProbe runs the hiccup meter over a phase's measured part, on every
// CPU the run uses (this process's and the managed servers'), and leaves
// the probes' own CPU out of the client's.
type hiccupProbe struct {
	serverCPUs string
	m          *hiccup.Meter
	err        error
}

func (p *hiccupProbe) Begin() {
	cpus, err := hiccup.AllowedCPUs()
	if err != nil {
		p.err = err
		return
	}
	if list, err := server.ParseCPUList(p.serverCPUs); err == nil {
		cpus = append(cpus, list...)
	}
	slices.Sort(cpus)
	p.m, p.err = hiccup.Start(slices.Compact(cpus), 0)
}

func (p *hiccupProbe) End(ph *metrics.Phase) {
	if p.m == nil {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("platform stalls not measured: %v", p.err))
		return
	}
	w, err := p.m.Window()
	p.m.Stop()
	p.m = nil
	if err != nil {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("platform stalls measured in part: %v", err))
	}
	ph.Hiccup = &w
	// The probes are not the workload's: their CPU (read per thread) leaves
	// the client's, as if they had not run.
	if ph.ClientCPUS > 0 && w.ProbeCPUS > 0 {
		ph.ClientCPUS = max(0, ph.ClientCPUS-w.ProbeCPUS)
		if ph.Ops > 0 {
			ph.ClientCPUUsPerOp = ph.ClientCPUS * 1e6 / float64(ph.Ops)
		}
	}
}
