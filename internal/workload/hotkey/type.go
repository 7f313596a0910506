package hotkey

import "github.com/storebench/storebench/internal/workload"

// Type is the hotkey workload's registration.
var Type = workload.Define("hotkey",
	"one small value read N times, over a persistent connection or a new one per get",
	workload.Load{Clients: DefaultClients, Ops: DefaultOps}, func() workload.Spec { return &Spec{} }, nil)

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
	c := workload.RunCell(params, Run)
	return []workload.Cell{c}, nil
}

// Stalls: its phases can have their server stopped (a scenario's stall).
func (*Spec) Stalls() {}
