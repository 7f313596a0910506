// Package capacity finds the highest open-loop rate a target sustains with
// its latency within an SLO (issue 17): a geometric ramp until a step
// misses, a bisection to within Params.Precision, and a confirmation run,
// each step extended until its percentiles' confidence intervals are
// narrow enough. It drives the target only through the functions a
// workload gives it (Drive), so it works over any op mix and never knows
// the store. Its results are the schema types of result/capacity.
package capacity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/workload"
)

// StepRequest asks for one open-loop phase.
type StepRequest struct {
	Name     string  // the phase's name, unique within the cell
	Rate     float64 // offered ops/s across the connections
	Duration time.Duration
}

// StepFunc runs one open-loop phase at r.Rate for r.Duration (warm-up its
// own business, outside the measured time) and returns it. The search
// merges several phases into one step when it needs more samples.
type StepFunc func(ctx context.Context, r StepRequest) (metrics.Phase, error)

// ClosedFunc runs one closed-loop phase with clients connections, for the
// USL fit.
type ClosedFunc func(ctx context.Context, name string, clients int, d time.Duration) (metrics.Phase, error)

// Drive is how the search reaches the target: Step is required, Closed
// optional (no USL fit without it).
type Drive struct {
	Step   StepFunc
	Closed ClosedFunc
}

// Bounds of Params; each says why in Validate's message.
const (
	MaxSLOs      = 4
	MaxSteps     = 200
	MaxStep      = 10 * time.Minute
	MinStep      = time.Second
	MaxUSLPoints = 16
	MinGrowth    = 1.1
	MaxGrowth    = 10
)

// Params say what to search for and how.
type Params struct {
	SLOs []SLO
	// Connections is how many connections (workers) the steps drive; the
	// StepFunc owns them, this is recorded.
	Connections int
	// StartRate is the ramp's first offered rate; MinRate the lowest the
	// search steps down to when even that misses; MaxRate the highest it
	// climbs to (a capacity found there is "at least").
	StartRate, MinRate, MaxRate float64
	// Growth is the ramp's factor from one step to the next.
	Growth float64
	// Precision is the bisection's stopping width, a share of the rate.
	Precision float64
	// CIShare is the widest a percentile's confidence interval may be, as a
	// share of its bound, before a step is extended.
	CIShare float64
	// MinStep is a step's first phase; it is extended up to MaxStep.
	MinStep, MaxStep time.Duration
	// MaxSteps bounds the steps of each SLO's search.
	MaxSteps int
	// ErrorBudget is the share of a step's ops that may fail.
	ErrorBudget float64
	// Need is a rate (ops/s) to cost at capacity: the cores it would take,
	// extrapolated; 0 for none.
	Need float64
	// USLClients are the closed-loop client counts of the USL fit, e.g.
	// 1, 2, 4, 8; none for no fit. USLDuration is each one's phase.
	USLClients  []int
	USLDuration time.Duration
	// RTT is the round trip the cell's network path adds (workload.Env.RTT):
	// a step that missed a bound it takes half of names the path.
	RTT time.Duration
}

// Defaults fills what p leaves zero.
func (p Params) Defaults() Params {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.StartRate, 1000)
	def(&p.MinRate, 10)
	def(&p.MaxRate, 1e6)
	def(&p.Growth, 2)
	def(&p.Precision, 0.02)
	def(&p.CIShare, 0.10)
	def(&p.ErrorBudget, 0.001)
	if p.Connections == 0 {
		p.Connections = 1
	}
	if p.MinStep == 0 {
		p.MinStep = 2 * time.Second
	}
	if p.MaxStep == 0 {
		p.MaxStep = 20 * time.Second
	}
	if p.MaxSteps == 0 {
		p.MaxSteps = 40
	}
	if p.USLDuration == 0 {
		p.USLDuration = 2 * time.Second
	}
	return p
}

// Validate reports every problem with p (after Defaults) at once, one line
// each.
func (p Params) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("capacity: "+format, a...)) }
	switch {
	case len(p.SLOs) == 0:
		bad(`give an SLO, e.g. "p99<=1ms"`)
	case len(p.SLOs) > MaxSLOs:
		bad("%d SLOs, at most %d: each runs a search of its own", len(p.SLOs), MaxSLOs)
	}
	for i, s := range p.SLOs {
		if len(s) == 0 || len(s) > MaxObjectives {
			bad("SLO %d has %d objectives, want 1 to %d", i+1, len(s), MaxObjectives)
		}
	}
	if err := workload.CheckClients("connections", p.Connections); err != nil {
		bad("%v", err)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"start rate", p.StartRate}, {"min rate", p.MinRate}, {"max rate", p.MaxRate}} {
		if err := load.CheckRate(r.name, r.v); err != nil {
			bad("%v", err)
		} else if r.v <= 0 {
			bad("%s must be positive ops/s, got %v", r.name, r.v)
		}
	}
	if p.MinRate > p.StartRate || p.StartRate > p.MaxRate {
		bad("want min rate <= start rate <= max rate, got %v, %v, %v ops/s", p.MinRate, p.StartRate, p.MaxRate)
	}
	if !(p.Growth >= MinGrowth && p.Growth <= MaxGrowth) {
		bad("growth %v: want %v to %v (below, the ramp crawls; above, the bisection starts from a wide gap)", p.Growth, MinGrowth, MaxGrowth)
	}
	if !(p.Precision >= 0.005 && p.Precision <= 0.5) {
		bad("precision %v: want 0.005 to 0.5 of the rate (finer is below the run-to-run noise of a shared machine)", p.Precision)
	}
	if !(p.CIShare >= 0.01 && p.CIShare <= 1) {
		bad("ci share %v: want 0.01 to 1 of the objective (narrower needs ~10^4 times the samples of 100%%)", p.CIShare)
	}
	if p.MinStep < MinStep || p.MaxStep > MaxStep || p.MinStep > p.MaxStep {
		bad("steps of %v to %v: want %v <= min <= max <= %v (the backlog slope needs seconds; longer is a soak test)", p.MinStep, p.MaxStep, MinStep, MaxStep)
	}
	if p.MaxSteps < 3 || p.MaxSteps > MaxSteps {
		bad("max steps %d: want 3 (ramp, bisect, confirm) to %d", p.MaxSteps, MaxSteps)
	}
	if !(p.ErrorBudget >= 0 && p.ErrorBudget <= 0.5) {
		bad("error budget %v: want 0 to 0.5 of the ops", p.ErrorBudget)
	}
	if err := load.CheckRate("need", p.Need); err != nil {
		bad("%v", err)
	}
	if len(p.USLClients) > MaxUSLPoints {
		bad("%d USL client counts, at most %d", len(p.USLClients), MaxUSLPoints)
	}
	for i, n := range p.USLClients {
		if err := workload.CheckClients("USL clients", n); err != nil {
			bad("%v", err)
		} else if i > 0 && n <= p.USLClients[i-1] {
			bad("USL client counts must increase, got %v", p.USLClients)
			break
		}
	}
	if len(p.USLClients) > 0 && (p.USLDuration < MinStep || p.USLDuration > MaxStep) {
		bad("USL phases of %v: want %v to %v", p.USLDuration, MinStep, MaxStep)
	}
	return errors.Join(errs...)
}

// Run searches the capacity at each SLO of p (after Defaults), then fits
// the USL when p asks for client counts and d.Closed is set. It returns the
// summary and every phase it ran, in order, also on error (what was
// measured stays measured); an error is a failed phase or ctx's. Finding
// no rate that meets an SLO is a result, not an error.
func Run(ctx context.Context, d Drive, p Params) (*schema.Summary, []metrics.Phase, error) {
	p = p.Defaults()
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if d.Step == nil {
		return nil, nil, errors.New("capacity: no step function")
	}
	begin := time.Now()
	r := &runner{ctx: ctx, d: d, p: p, sum: &schema.Summary{Search: p.rules()}}
	for _, s := range p.SLOs {
		r.sum.SLOs = append(r.sum.SLOs, toSchema(s))
	}
	var err error
	for i := range p.SLOs {
		var c schema.Capacity
		if c, err = r.search(i); err != nil {
			break
		}
		r.sum.Capacity = append(r.sum.Capacity, c)
	}
	if err == nil && d.Closed != nil && len(p.USLClients) > 0 {
		err = r.usl()
	}
	r.sum.TotalS = time.Since(begin).Seconds()
	return r.sum, r.phases, err
}

func (p Params) rules() schema.SearchRules {
	return schema.SearchRules{
		Connections: p.Connections, StartOpsS: p.StartRate, MinOpsS: p.MinRate, MaxOpsS: p.MaxRate,
		Growth: p.Growth, Precision: p.Precision, CIShare: p.CIShare, CIConfidence: Confidence,
		MinStepS: p.MinStep.Seconds(), MaxStepS: p.MaxStep.Seconds(),
		MinAchieved: MinAchieved, ErrorBudget: p.ErrorBudget, BacklogNoise: BacklogNoise,
	}
}

func toSchema(s SLO) schema.SLO {
	out := schema.SLO{Text: s.String()}
	for _, o := range s {
		out.Objectives = append(out.Objectives, schema.Objective{Percentile: o.Percentile, MaxUs: us(o.Max)})
	}
	return out
}

// usl measures closed-loop throughput at each client count and fits it.
func (r *runner) usl() error {
	var pts []schema.USLPoint
	for _, n := range r.p.USLClients {
		name := fmt.Sprintf("usl %d clients", n)
		ph, err := r.d.Closed(r.ctx, name, n, r.p.USLDuration)
		ph.Name = name
		r.phases = append(r.phases, ph)
		if err != nil {
			return fmt.Errorf("capacity: %s: %w", name, err)
		}
		pts = append(pts, schema.USLPoint{Clients: n, OpsS: ph.ThroughputOpsS, Phase: name})
	}
	fit := Fit(pts)
	r.sum.USL = &fit
	return nil
}

// EngineStep is the StepFunc of a workload whose ops are load.Workers: it
// runs load.Run over workers (kept open between steps) with base's settings
// (warm-up, kinds, probe through hooks) at the asked rate and duration.
func EngineStep(workers []load.Worker, base load.Config, hooks workload.Hooks) StepFunc {
	return func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		c := base
		c.Name, c.Rate, c.Duration, c.Ops, c.WarmupOps = r.Name, r.Rate, r.Duration, 0, 0
		c.Workers = len(workers)
		return load.Run(ctx, hooks.Apply(c), workers)
	}
}

// EngineClosed is the ClosedFunc of a workload whose ops are load.Workers:
// workers(n) gives n workers and a function that closes them.
func EngineClosed(workers func(ctx context.Context, n int) ([]load.Worker, func(), error), base load.Config, hooks workload.Hooks) ClosedFunc {
	return func(ctx context.Context, name string, n int, d time.Duration) (metrics.Phase, error) {
		ws, closeAll, err := workers(ctx, n)
		if err != nil {
			return metrics.Phase{Name: name}, err
		}
		defer closeAll()
		c := base
		c.Name, c.Rate, c.Duration, c.Ops, c.WarmupOps, c.Workers = name, 0, d, 0, 0, n
		return load.Run(ctx, hooks.Apply(c), ws)
	}
}
