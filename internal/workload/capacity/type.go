package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/mix"
)

// Type is the capacity workload's registration: the highest offered rate
// each target sustains within each SLO, on mix's ops.
var Type = workload.Define("capacity",
	"the highest open-loop rate each store sustains with its latency percentiles within an SLO (--slo p99<=1ms), its cost, and a USL fit",
	workload.Load{Clients: 8}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a capacity entry of a scenario: the op mix (mix's fields) and
// the search.
type Spec struct {
	// Mix is the op mix, written with mix's own fields (keyspace,
	// read_ratio, key_dist, …) beside the search's.
	Mix        mix.Spec `yaml:",inline" json:"mix"`
	Search     `yaml:",inline"`
	USLClients []int `yaml:"usl_clients,omitempty" json:"usl_clients,omitempty"`
	// Trace, when set, replaces the mix by a recorded trace (replay's
	// files and formats, or sample:FORMAT): the search finds the highest
	// speed factor of the trace whose replay meets each SLO.
	Trace       string `yaml:"trace,omitempty" json:"trace,omitempty"`
	TraceFormat string `yaml:"trace_format,omitempty" json:"trace_format,omitempty"`
}

// Search is a search's fields of a scenario entry: capacity's, and those of
// a workload that searches over ops of its own (cache-aside's application
// loop), so both read the same fields through one parser.
type Search struct {
	// SLO are the service-level objectives, each searched on its own,
	// e.g. ["p99<=1ms", "p99.9<=5ms,p50<=200us"].
	SLO []string `yaml:"slo,omitempty" json:"slo,omitempty"`
	// Need is a rate to cost at capacity (cores needed, extrapolated).
	Need      float64       `yaml:"need,omitempty" json:"need,omitempty"`
	StartRate float64       `yaml:"start_rate,omitempty" json:"start_rate,omitempty"`
	MaxRate   float64       `yaml:"max_rate,omitempty" json:"max_rate,omitempty"`
	MinStep   time.Duration `yaml:"min_step,omitempty" json:"min_step,omitempty"`
	MaxStep   time.Duration `yaml:"max_step,omitempty" json:"max_step,omitempty"`
	MaxSteps  int           `yaml:"max_steps,omitempty" json:"max_steps,omitempty"`
	// Precision is the bisection's stopping width, a share of the rate
	// (default 2%): a coarser one saves steps where a quick run needs it.
	Precision float64 `yaml:"precision,omitempty" json:"precision,omitempty"`
	// Growth is the ramp's factor from one step to the next (default 2):
	// a larger one leaves a short search steps to bisect with.
	Growth float64 `yaml:"growth,omitempty" json:"growth,omitempty"`
}

func (e *Spec) Defaults() {}

// ChecksMachine: a capacity is a latency bound's verdict.
func (e *Spec) ChecksMachine() bool { return true }

// mix is the op mix's parameters: the search sets rates and durations,
// so only the clients come from the load.
func (e *Spec) mix(l workload.Load, seed uint64) mix.Params {
	return e.Mix.Params(workload.Load{Clients: l.Clients, Ops: 1}, seed)
}

func (e *Spec) params(l workload.Load) (Params, error) {
	return e.Search.Params(l.Clients, e.USLClients)
}

// Params are the search's parameters over connections (and a USL fit at
// the usl client counts, none for no fit), after defaults and checked.
func (s Search) Params(connections int, usl []int) (Params, error) {
	p := Params{Connections: connections, Need: s.Need, StartRate: s.StartRate, MaxRate: s.MaxRate,
		MinStep: s.MinStep, MaxStep: s.MaxStep, MaxSteps: s.MaxSteps, Precision: s.Precision, Growth: s.Growth, USLClients: usl}
	for _, text := range s.SLO {
		slo, err := ParseSLO(text)
		if err != nil {
			return p, fmt.Errorf("capacity: %w", err) // ParseSLO names the field
		}
		p.SLOs = append(p.SLOs, slo)
	}
	p = p.Defaults()
	if p.MinRate > p.StartRate {
		p.MinRate = p.StartRate
	}
	return p, p.Validate()
}

// Validate: the search's parameters, and a load that is the search's own
// (it sets the rates and durations; clients are its connections).
func (e *Spec) Validate(l workload.Load, seed uint64) error {
	if l.Ops != 0 || l.Duration != 0 || l.Rate != 0 || l.Pipeline > 1 || l.ConnectPerOp {
		return errors.New("capacity: the search sets the rates and step durations; ops, duration, rate, pipeline and connect_per_op do not apply (clients are its connections)")
	}
	if _, err := e.params(l); err != nil {
		return err
	}
	if e.Trace != "" {
		return e.traceParams(l, seed).Validate()
	}
	if e.TraceFormat != "" {
		return errors.New("capacity: trace_format without a trace")
	}
	return e.mix(l, seed).Validate()
}

// Cells makes one cell per target.
func (e *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	params, err := e.params(p.Load)
	if err != nil {
		return nil, err
	}
	if e.Trace != "" {
		rp := e.traceParams(p.Load, p.Seed)
		return []workload.Cell{{
			Params: traceRecorded{Trace: rp.Trace, TraceFormat: rp.Format, Clients: rp.Load.Clients, SLO: e.SLO, Need: e.Need},
			Memory: rp.Memory(),
			Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
				phases, sum, err := SearchTrace(ctx, env.Store, rp, e.Search, h)
				out := workload.Outcome{Phases: phases}
				if sum != nil {
					out.Summary = func(c *result.Cell) { c.Capacity = sum }
				}
				return out, err
			},
		}}, nil
	}
	mp := e.mix(p.Load, p.Seed)
	return []workload.Cell{{
		Params: recorded{Mix: mp, SLO: e.SLO, Need: params.Need, USLClients: params.USLClients},
		Memory: mp.Memory(),
		Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
			workers, cfg, more, closeAll, err := mix.Driver(ctx, env.Store, mp)
			if err != nil {
				return workload.Outcome{}, err
			}
			defer closeAll()
			drive := Drive{Step: EngineStep(workers, cfg, h)}
			if len(params.USLClients) > 0 {
				drive.Closed = EngineClosed(more, cfg, h)
			}
			params := params
			params.RTT = env.RTT
			sum, phases, err := Run(ctx, drive, params)
			// An SLO no rate meets is a finding ("none", the knee curve
			// beside it), not a failure: a threshold judges it (--assert
			// 'capacity>0').
			return workload.Outcome{Phases: phases, Summary: func(c *result.Cell) { c.Capacity = sum }}, err
		},
	}}, nil
}

// recorded is what result.json keeps of a capacity cell: its op mix and
// its search.
type recorded struct {
	Mix        mix.Params
	SLO        []string
	Need       float64
	USLClients []int
}

func (r recorded) MarshalJSON() ([]byte, error) {
	m, err := workload.Record(r.Mix)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"ops", "pipeline"} {
		delete(m, k) // the search sets them
	}
	m["slo"], m["need"], m["usl_clients"] = r.SLO, r.Need, r.USLClients
	return json.Marshal(m)
}
