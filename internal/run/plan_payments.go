package run

import (
	"context"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	schema "github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/payments"
)

// planPayments makes one cell per transaction mode × durability level the
// store offers; scenario validation has already built every cell's Params.
func planPayments(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	spec := w.PaymentsSpec()
	var cells []cell
	for _, v := range spec.Variants(t.Spec.Store) {
		p, _ := payments.PlanParams(spec, v, s.Seed, s.EffectiveLoad(w).Workload())
		params := p.CellParams()
		if v.Note != "" {
			params["note"] = v.Note
		}
		var sum *schema.Summary
		cells = append(cells, cell{
			target: t, workload: w.Type, name: w.Label(), params: params,
			run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
				var phases []metrics.Phase
				var err error
				sum, phases, err = payments.Run(ctx, inst.Store, p, h)
				return phases, err
			},
			annotate: func(rc *result.Cell) { rc.Payments = sum },
		})
	}
	return cells
}
