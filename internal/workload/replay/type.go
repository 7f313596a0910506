package replay

import (
	"context"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the replay workload's registration: every key-value store
// replays a trace.
var Type = workload.Define("replay",
	"recorded traffic at its recorded pace (Twitter and Meta kvcache traces, Redis MONITOR captures, storebench's CSV; --trace FILE, --speed): requests replayed and unsupported, hits and misses, the sends' lateness, the trace's rate beside the achieved one",
	workload.Load{Clients: DefaultClients}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a replay entry of a scenario: one cell per trace and speed.
type Spec struct {
	// Trace are the trace files (or built-in samples, sample:FORMAT), one
	// or a list; TraceFormat their format (twitter, kvcache,
	// redis-monitor, csv), detected when left out.
	Trace       Traces `yaml:"trace,omitempty" json:"trace,omitempty"`
	TraceFormat string `yaml:"trace_format,omitempty" json:"trace_format,omitempty"`
	// Speed are the speed factors, each a cell: "1" (as recorded), "2"
	// (twice as fast), "max".
	Speed []string `yaml:"speed,omitempty" json:"speed,omitempty"`
}

// Traces are a replay entry's traces: a scenario writes one (trace: FILE)
// or a list.
type Traces []string

// UnmarshalYAML takes one trace or a list of them.
func (t *Traces) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var one string
		if err := n.Decode(&one); err != nil {
			return err
		}
		*t = Traces{one}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*t = list
	return nil
}

func (s *Spec) Defaults() {
	if len(s.Speed) == 0 {
		s.Speed = []string{"1"}
	}
}

// params are the cells' parameters: each trace at each speed (a trace
// list left empty is one cell without a trace, which Validate refuses).
func (s *Spec) params(l workload.Load, seed uint64) []Params {
	traces := s.Trace
	if len(traces) == 0 {
		traces = Traces{""}
	}
	var out []Params
	for _, tr := range traces {
		for _, sp := range s.Speed {
			out = append(out, Params{Trace: tr, Format: s.TraceFormat, Speed: sp, Seed: seed, Load: l}.WithDefaults())
		}
	}
	return out
}

// Validate checks each cell; a trace is read once per cell's check (its
// head only).
func (s *Spec) Validate(l workload.Load, seed uint64) error {
	for _, p := range s.params(l, seed) {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	var cells []workload.Cell
	names := []string{"speed"}
	if len(s.Trace) > 1 {
		names = []string{"trace", "speed"}
	}
	for _, params := range s.params(p.Load, p.Seed) {
		cells = append(cells, workload.Cell{
			Params: params, Names: names, Memory: params.Memory(),
			Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
				phases, sum, err := Run(ctx, env.Store, params, h)
				out := workload.Outcome{Phases: phases}
				if sum != nil {
					out.Summary = func(c *result.Cell) { c.Replay = sum }
				}
				return out, err
			},
		})
	}
	return cells, workload.CheckDistinct(cells)
}
