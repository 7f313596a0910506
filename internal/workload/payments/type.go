package payments

import (
	"context"
	"errors"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the payments workload's registration.
var Type = workload.Define("payments",
	"payments OLTP: four round trips per transfer, many workers, invariants checked after every run",
	workload.Load{}, func() workload.Spec { return &Spec{} },
	workload.Requires[store.Payments]("payments", "it has no transactions over several tables"))

// Spec is a payments entry of a scenario: one cell per transaction mode ×
// durability level the store offers.
type Spec struct {
	Payments *Section `yaml:"payments,omitempty" json:"payments,omitempty"`
}

func (e *Spec) section() Section { return workload.ValueOr(e.Payments, Section{}) }

func (e *Spec) Defaults() {}

// KeepsData says the section asks to keep its tables after the run.
func (e *Spec) KeepsData() bool { return e.Payments != nil && e.Payments.Keep }

// Validate checks what does not depend on the store; each store's modes
// are checked by Cells.
func (e *Spec) Validate(l workload.Load, _ uint64) error {
	if l.Clients < 0 {
		return errors.New("payments: clients must be positive")
	}
	return nil
}

func (e *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	spec := e.section()
	spec.Keep = spec.Keep || p.Keep
	var cells []workload.Cell
	for _, v := range spec.Variants(p.Kind) {
		params, err := PlanParams(spec, v, p.Seed, p.Load)
		if err != nil {
			return nil, err
		}
		cells = append(cells, workload.Cell{
			Params: params, Names: []string{"mode", "durability"}, Memory: params.Memory(),
			Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
				sum, phases, err := Run(ctx, env.Store, params, h)
				return workload.Outcome{Phases: phases, Summary: func(c *result.Cell) { c.Payments = sum }}, err
			},
		})
	}
	return cells, nil
}
