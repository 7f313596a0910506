package run

import (
	"context"
	"maps"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
)

// withStall gives a workload entry's cells its stall, recorded in their
// parameters as asked; what was done is a note of each phase. Validate has
// checked that the stall fits the phase and that every target is managed.
func withStall(cells []cell, s *scenario.Stall) []cell {
	if s == nil {
		return cells
	}
	st := s.Target()
	for i := range cells {
		cells[i].stall = &st
		cells[i].params = maps.Clone(cells[i].params)
		cells[i].params["stall_after"] = st.After.String()
		cells[i].params["stall_for"] = st.For.String()
	}
	return cells
}

// stallHook observes each phase as inst.Probe does and stalls the server in it.
func stallHook(ctx context.Context, inst *target.Instance, s target.Stall) func(string) load.Probe {
	return func(phase string) load.Probe {
		return inst.StallProbe(ctx, s, inst.Probe(phase))
	}
}

// resumeServer continues a managed server that a stall may have stopped.
func resumeServer(inst *target.Instance) {
	if inst.Server != nil {
		_ = inst.Server.Resume()
	}
}
