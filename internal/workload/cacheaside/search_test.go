package cacheaside

import (
	"math"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// TestSearchOverTheLoop runs capacity's search over the application loop
// on a real PostgreSQL alone and behind a real Redis. What it asserts holds
// on any machine: the search completes and finds a rate within a loose SLO
// (the machine is shared with other test runs); every phase it ran is
// recorded with its hit ratio and database queries, which are exactly one
// read per miss plus one write per write; at capacity the database sees at
// most 1 − hit ratio × read share queries per request. Which capacity is
// higher depends on the machine (on 2 shared CPUs the cache's extra round
// trip can cost more than the database reads it saves), so it is logged,
// not asserted.
func TestSearchOverTheLoop(t *testing.T) {
	slo, err := capacity.ParseSLO("p99<=250ms")
	if err != nil {
		t.Fatal(err)
	}
	capacities := map[string]float64{}
	for _, cache := range []string{"", "redis"} {
		t.Run("cache="+cache, func(t *testing.T) {
			search := capacity.Params{SLOs: []capacity.SLO{slo}, StartRate: 200, MaxRate: 800, MinStep: time.Second, MaxStep: time.Second,
				MaxSteps: 8, Precision: 0.1}.Defaults() // capped: the test's time goes to the figures, not the climb
			p := Params{
				Keyspace: workload.Keyspace{Keys: 2000}, KeyDist: keydist.Zipfian, ReadRatio: f64(0.95), Policy: Invalidate, TTL: dur(time.Hour),
				Load:   workload.Load{Clients: 4, Ops: 4000, WarmupOps: 4000},
				Search: &search,
			}
			res, phases, err := Run(ctxT(t), env(t, cache), p, workload.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			sum, cs := res.CacheAside, res.Capacity
			if sum == nil || cs == nil || len(cs.Capacity) != 1 || len(sum.AtCapacity) != 1 {
				t.Fatalf("summaries %+v, %+v", sum, cs)
			}
			byName := map[string]bool{}
			for _, ph := range phases {
				byName[ph.Name] = true
			}
			recorded := map[string]bool{}
			for _, sp := range sum.SearchPhases {
				recorded[sp.Phase] = true
				if !byName[sp.Phase] {
					t.Errorf("search phase %q is not among the cell's phases", sp.Phase)
				}
				misses, writes := sp.Reads-sp.Hits, sp.Requests-sp.Reads
				if sp.Requests == 0 || sp.DBQueries != misses+writes {
					t.Errorf("%s: %d db queries for %d misses and %d writes (%d requests)", sp.Phase, sp.DBQueries, misses, writes, sp.Requests)
				}
				if cache == "" && sp.Hits != 0 {
					t.Errorf("%s: %d hits without a cache", sp.Phase, sp.Hits)
				}
			}
			for _, st := range cs.Steps {
				for _, name := range st.Phases {
					if !recorded[name] {
						t.Errorf("step phase %q has no cache figures", name)
					}
				}
			}
			c, at := cs.Capacity[0], sum.AtCapacity[0]
			if !c.Found || !at.Found || at.OpsS != c.OpsS || at.SLO != "p99<=250ms" || at.Requests == 0 {
				t.Fatalf("capacity %+v, at capacity %+v", c, at)
			}
			readShare := 0.95
			if bound := 1 - at.HitRatio*readShare + 0.02; at.DBQueriesPerRequest > bound {
				t.Errorf("at capacity %.3f db queries per request with hit ratio %.3f, want <= %.3f", at.DBQueriesPerRequest, at.HitRatio, bound)
			}
			if cache == "" && math.Abs(at.DBQueriesPerRequest-1) > 1e-9 {
				t.Errorf("database alone: %v db queries per request, want 1", at.DBQueriesPerRequest)
			}
			if cache != "" && at.HitRatio < 0.8 {
				t.Errorf("hit ratio at capacity %.3f on a warm cache of a 2000-key zipfian keyspace, want >= 0.8", at.HitRatio)
			}
			capacities[cache] = c.OpsS
			t.Logf("capacity %.0f ops/s (at least: %v) with hit ratio %.3f, %.3f db queries/request, %.0f db queries/s; %d steps, %s",
				c.OpsS, c.AtLeast, at.HitRatio, at.DBQueriesPerRequest, at.DBQueriesPerS, len(cs.Steps), c.Reason)
		})
	}
	t.Logf("capacity at p99<=250ms: PostgreSQL alone %.0f ops/s, behind Redis %.0f ops/s", capacities[""], capacities["redis"])
}
