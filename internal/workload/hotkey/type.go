package hotkey

import (
	"context"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the hotkey workload's registration.
type Type struct{}

func (Type) Name() string { return "hotkey" }
func (Type) Help() string {
	return "one small value read N times, over a persistent connection or a new one per get"
}
func (Type) Supports(target.Kind) error { return nil }
func (Type) DefaultLoad() workload.Load {
	return workload.Load{Clients: DefaultClients, Ops: DefaultOps}
}
func (Type) NewSpec() workload.Spec { return &Spec{} }

// Spec is a hotkey entry of a scenario: one cell.
type Spec struct {
	Value     string `yaml:"value,omitempty" json:"value,omitempty"`
	ValueSize int    `yaml:"value_size,omitempty" json:"value_size,omitempty"`
}

// Defaults: the article's value.
func (s *Spec) Defaults() {
	if s.Value == "" && s.ValueSize == 0 {
		s.Value = DefaultValue
	}
}

// params leave the value as given: Run spells a sized one out, which can
// be 512 MiB, and that is not the plan's work.
func (s *Spec) params(l workload.Load, seed uint64) Params {
	return Params{ValueSize: s.ValueSize, Value: s.Value, Seed: seed, Load: l}
}

func (s *Spec) Validate(l workload.Load, seed uint64) error { return s.params(l, seed).Validate() }

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	params := s.params(p.Load, p.Seed)
	return []workload.Cell{{
		Params: params, Memory: params.Memory(),
		Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
			phases, err := Run(ctx, env.Store, params, h)
			return workload.Outcome{Phases: phases}, err
		},
	}}, nil
}

// Stalls: its phases can have their server stopped (a scenario's stall).
func (*Spec) Stalls() {}
