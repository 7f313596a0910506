package throughput

import (
	"context"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the throughput workload's registration.
type Type struct{}

func (Type) Name() string { return "throughput" }
func (Type) Help() string {
	return "redis-benchmark-like SET then GET of small values over random keys, 50 clients, optional pipeline"
}
func (Type) Supports(target.Kind) error { return nil }
func (Type) DefaultLoad() workload.Load {
	return workload.Load{Clients: DefaultClients, Ops: DefaultOps}
}
func (Type) NewSpec() workload.Spec { return &Spec{} }

// Spec is a throughput entry of a scenario: one cell.
type Spec struct {
	Keyspace   int64    `yaml:"keyspace,omitempty" json:"keyspace,omitempty"`
	ValueSize  int      `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	KeyMode    string   `yaml:"key_mode,omitempty" json:"key_mode,omitempty"`
	Operations []string `yaml:"operations,omitempty" json:"operations,omitempty"`
}

func (s *Spec) params(l workload.Load, seed uint64) Params {
	return Params{Keyspace: workload.Keyspace{Keys: s.Keyspace, ValueSize: s.ValueSize, KeyMode: workload.KeyMode(s.KeyMode), Seed: seed}, Operations: s.Operations, Load: l}.WithDefaults()
}

// Defaults are Params.WithDefaults': redis-benchmark's.
func (s *Spec) Defaults() {
	p := s.params(workload.Load{}, 0)
	s.Keyspace, s.ValueSize, s.KeyMode, s.Operations = p.Keys, p.ValueSize, string(p.KeyMode), p.Operations
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
