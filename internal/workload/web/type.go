package web

import "github.com/storebench/storebench/internal/workload"

// Type is the web workload's registration.
var Type = workload.Define("web",
	"an HTTP endpoint doing one store get per request, driven over loopback (pooled or per-request connections)",
	workload.Load{Clients: 1, Ops: 10000}, func() workload.Spec { return &Spec{} }, nil)

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
	c := workload.RunCell(params, Run)
	return []workload.Cell{c}, nil
}

// Stalls: its phases can have their server stopped (a scenario's stall).
func (*Spec) Stalls() {}
