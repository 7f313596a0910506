package cacheaside

import (
	"context"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/cacheaside"
	capschema "github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
)

// runSearch runs capacity's search over the application loop l, which the
// main phase warmed (its cache filled, its versions committed): each step
// is an open-loop phase of the same requests at the search's rate, with no
// warm-up of its own. It records what the cache did in every phase and at
// each SLO's capacity in sum. An SLO no rate met is a finding, as in a
// capacity cell: "none", beside the knee curve.
func runSearch(ctx context.Context, l *loop, p capacity.Params, hooks workload.Hooks, sum *schema.Summary) (*capschema.Summary, []metrics.Phase, error) {
	byPhase := map[string]schema.SearchPhase{}
	step := func(ctx context.Context, r capacity.StepRequest) (metrics.Phase, error) {
		ph, c, _, err := l.run(ctx, load.Config{Name: r.Name, Rate: r.Rate, Duration: r.Duration}, hooks)
		sp := schema.SearchPhase{Phase: r.Name, DurationS: ph.DurationS, Requests: c.reads + c.writes, Reads: c.reads, Hits: c.hits,
			HitRatio: ratio(c.hits, c.reads), DBQueries: c.dbReads + c.dbWrites, Stale: c.stale}
		sp.DBQueriesPerRequest = ratio(sp.DBQueries, sp.Requests)
		sum.SearchPhases = append(sum.SearchPhases, sp)
		byPhase[r.Name] = sp
		return ph, err
	}
	cs, phases, err := capacity.Run(ctx, capacity.Drive{Step: step}, p)
	if cs == nil {
		return nil, phases, err
	}
	for _, c := range cs.Capacity {
		sum.AtCapacity = append(sum.AtCapacity, atCapacity(cs, c, byPhase))
	}
	return cs, phases, err
}

// atCapacity is SLO c's capacity with the cache's figures of its
// confirming step, its phases summed.
func atCapacity(cs *capschema.Summary, c capschema.Capacity, byPhase map[string]schema.SearchPhase) schema.AtCapacity {
	a := schema.AtCapacity{Found: c.Found, OpsS: c.OpsS, AtLeast: c.AtLeast}
	if c.SLO >= 0 && c.SLO < len(cs.SLOs) {
		a.SLO = cs.SLOs[c.SLO].Text
	}
	if !c.Found || c.Confirm < 0 || c.Confirm >= len(cs.Steps) {
		return a
	}
	var reads, hits, queries int64
	var durS float64
	for _, name := range cs.Steps[c.Confirm].Phases {
		sp := byPhase[name]
		a.Requests += sp.Requests
		a.Stale += sp.Stale
		queries += sp.DBQueries
		reads += sp.Reads
		hits += sp.Hits
		durS += sp.DurationS
	}
	a.HitRatio = ratio(hits, reads)
	a.DBQueriesPerRequest = ratio(queries, a.Requests)
	if durS > 0 {
		a.DBQueriesPerS = float64(queries) / durS
	}
	return a
}
