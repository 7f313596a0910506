package web

import (
	"context"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the web workload's registration.
type Type struct{}

func (Type) Name() string { return "web" }
func (Type) Help() string {
	return "an HTTP endpoint doing one store get per request, driven over loopback (pooled or per-request connections)"
}
func (Type) Supports(target.Kind) error { return nil }
func (Type) DefaultLoad() workload.Load { return workload.Load{Clients: 1, Ops: 10000} }
func (Type) NewSpec() workload.Spec     { return &Spec{} }

// Spec is a web entry of a scenario: one cell.
type Spec struct {
	Value string `yaml:"value,omitempty" json:"value,omitempty"`
}

// Defaults: the article's value.
func (s *Spec) Defaults() {
	if s.Value == "" {
		s.Value = "hello world"
	}
}

func (s *Spec) params(l workload.Load) Params { return Params{Value: s.Value, Load: l} }

func (s *Spec) Validate(l workload.Load, _ uint64) error { return s.params(l).Validate() }

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	params := s.params(p.Load)
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
