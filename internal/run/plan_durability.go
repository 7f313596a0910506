package run

import (
	"context"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/durability"
)

// planDurability makes one cell that crashes the target Trials times.
func planDurability(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	p := s.DurabilityParams(w)
	var sum schema.Summary
	ran := false
	return []cell{{
		target: t, workload: w.Type, name: w.Label(),
		params: map[string]any{"trials": p.Trials, "writers": p.Writers, "value_size": p.ValueSize,
			"min_acked": p.MinAcked, "kill_window": p.KillWindow.String(), "seed": p.Seed},
		// The workload kills the server on purpose; the watchdog must not
		// take that for a server dying under the cell.
		killsServer: true,
		run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
			var phases []metrics.Phase
			var err error
			sum, phases, err = durability.Run(ctx, inst, p, h)
			ran = true
			return phases, err
		},
		annotate: func(rc *result.Cell) {
			if ran {
				rc.Durability = &sum
			}
		},
	}}
}
