package throughput

import "github.com/storebench/storebench/internal/workload"

// Type is the throughput workload's registration.
var Type = workload.Define("throughput",
	"redis-benchmark-like SET then GET of small values over random keys, 50 clients, optional pipeline",
	workload.Load{Clients: DefaultClients, Ops: DefaultOps}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a throughput entry of a scenario: one cell.
type Spec struct {
	workload.KeyspaceSpec `yaml:",inline"`
	Operations            []string `yaml:"operations,omitempty" json:"operations,omitempty"`
}

func (s *Spec) params(l workload.Load, seed uint64) Params {
	return Params{Keyspace: s.Seeded(seed), Operations: s.Operations, Load: l}.WithDefaults()
}

// Defaults are Params.WithDefaults': redis-benchmark's.
func (s *Spec) Defaults() {
	p := s.params(workload.Load{}, 0)
	s.KeyspaceSpec, s.Operations = p.Keyspace.Written(), p.Operations
}

func (s *Spec) Validate(l workload.Load, seed uint64) error { return s.params(l, seed).Validate() }

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	params := s.params(p.Load, p.Seed)
	params.Part = p.Shard.Part(p.Whole)
	c := workload.RunCell(params, Run)
	return []workload.Cell{c}, nil
}

// Stalls: its phases can have their server stopped (a scenario's stall).
func (*Spec) Stalls() {}

// Shards: a shard writes its part of the keys (run --shard).
func (*Spec) Shards() {}
