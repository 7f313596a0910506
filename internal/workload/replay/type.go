package replay

import (
	"context"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the replay workload's registration: every key-value store
// replays a trace.
var Type = workload.Define("replay",
	"recorded traffic at its recorded pace (Twitter and Meta kvcache traces, Redis MONITOR captures, storebench's CSV; --trace FILE, --speed): requests replayed and unsupported, hits and misses, the sends' lateness, the trace's rate beside the achieved one",
	workload.Load{Clients: DefaultClients}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a replay entry of a scenario: one cell per speed.
type Spec struct {
	// Trace is the trace file; TraceFormat its format (twitter, kvcache,
	// redis-monitor, csv), detected when left out.
	Trace       string `yaml:"trace,omitempty" json:"trace,omitempty"`
	TraceFormat string `yaml:"trace_format,omitempty" json:"trace_format,omitempty"`
	// Speed are the speed factors, each a cell: "1" (as recorded), "2"
	// (twice as fast), "max".
	Speed []string `yaml:"speed,omitempty" json:"speed,omitempty"`
}

func (s *Spec) Defaults() {
	if len(s.Speed) == 0 {
		s.Speed = []string{"1"}
	}
}

func (s *Spec) params(speed string, l workload.Load, seed uint64) Params {
	return Params{Trace: s.Trace, Format: s.TraceFormat, Speed: speed, Seed: seed, Load: l}.WithDefaults()
}

// Validate checks each speed's cell; the trace is read once per cell's
// check (its head only).
func (s *Spec) Validate(l workload.Load, seed uint64) error {
	for _, sp := range s.Speed {
		if err := s.params(sp, l, seed).Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	var cells []workload.Cell
	for _, sp := range s.Speed {
		params := s.params(sp, p.Load, p.Seed)
		cells = append(cells, workload.Cell{
			Params: params, Names: []string{"speed"}, Memory: params.Memory(),
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
