package cacheaside

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/metrics"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// NoCache names the cell of the database alone among an entry's caches.
const NoCache = "none"

// Type is the cache-aside workload's registration: it runs on a database
// target, with each of the entry's caches (other targets of the scenario)
// in front of it in turn.
var Type = workload.Define("cache-aside",
	"a cache in front of a database, as an application runs it: hit ratio, database load saved, staleness after writes, stampedes on a hot key's expiry",
	workload.Load{Clients: DefaultClients, Ops: DefaultOps}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a cache-aside entry of a scenario: its targets are the
// databases, and cache_aside.caches the targets put in front of each (by
// name; "none" for the database alone), one cell per cache.
type Spec struct {
	CacheAside *Section `yaml:"cache_aside,omitempty" json:"cache_aside,omitempty"`
	// Search, with an slo, makes each cell also search the highest
	// open-loop rate of its application loop within each SLO, with
	// capacity's fields and search (slo, need, start_rate, max_rate,
	// min_step, max_step, max_steps, precision); without an slo they are
	// unused.
	capacity.Search `yaml:",inline"`
	// Trace, when set, drives the application's reads and writes from a
	// recorded trace (replay's formats, or sample:FORMAT) instead of
	// key_dist and read_ratio (--trace).
	Trace       string `yaml:"trace,omitempty" json:"trace,omitempty"`
	TraceFormat string `yaml:"trace_format,omitempty" json:"trace_format,omitempty"`
}

// Section is the entry's cache_aside section (zero fields take Params'
// defaults).
type Section struct {
	Caches       []string       `yaml:"caches,omitempty" json:"caches,omitempty"`
	Keys         int64          `yaml:"keys,omitempty" json:"keys,omitempty"`
	ValueSize    int            `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	ValueSizeMax int            `yaml:"value_size_max,omitempty" json:"value_size_max,omitempty"`
	KeyDist      string         `yaml:"key_dist,omitempty" json:"key_dist,omitempty"`
	Theta        float64        `yaml:"theta,omitempty" json:"theta,omitempty"`
	ReadRatio    *float64       `yaml:"read_ratio,omitempty" json:"read_ratio,omitempty"`
	Policy       string         `yaml:"policy,omitempty" json:"policy,omitempty"`
	TTL          *time.Duration `yaml:"ttl,omitempty" json:"ttl,omitempty"`
	Stampede     *Stampede      `yaml:"stampede,omitempty" json:"stampede,omitempty"`
}

func (e *Spec) section() Section { return workload.ValueOr(e.CacheAside, Section{}) }

func (e *Spec) Defaults() {}

// ChecksMachine: with an slo, the cell searches a capacity at it.
func (e *Spec) ChecksMachine() bool { return len(e.SLO) > 0 }

func (e *Spec) params(l workload.Load, seed uint64) (Params, error) {
	s := e.section()
	p := Params{Keyspace: workload.Keyspace{Keys: s.Keys, ValueSize: s.ValueSize, Seed: seed}, ValueSizeMax: s.ValueSizeMax,
		KeyDist: keydist.Dist(s.KeyDist), Theta: s.Theta, ReadRatio: s.ReadRatio, Policy: s.Policy, TTL: s.TTL, Load: l,
		Trace: e.Trace, TraceFormat: e.TraceFormat}
	if s.Stampede != nil {
		p.Stampede = *s.Stampede
	}
	// The search's other fields without an slo ask for nothing: a suite's
	// quick section lays them over every cache-aside entry, searching or not.
	if len(e.SLO) > 0 {
		sp, err := e.Search.Params(l.WithDefaults(DefaultClients, DefaultOps).Clients, nil)
		if err != nil {
			return p, fmt.Errorf("cache-aside: %w", err)
		}
		p.Search = &sp
	}
	return p, nil
}

func (e *Spec) Validate(l workload.Load, seed uint64) error {
	if len(e.section().Caches) == 0 {
		return fmt.Errorf("cache-aside: cache_aside: caches is required: the targets to put in front of the database, by name (%s for the database alone)", NoCache)
	}
	p, err := e.params(l, seed)
	if err != nil {
		return err
	}
	return p.Validate()
}

// Cells makes one cell per cache in front of this database target.
func (e *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	var cells []workload.Cell
	for _, cache := range e.section().Caches {
		params, err := e.params(p.Load, p.Seed)
		if err != nil {
			return nil, err
		}
		if cache != NoCache {
			other, ok := p.Others[cache]
			if !ok {
				return nil, fmt.Errorf("cache-aside: cache %s is not a target of the scenario (its targets are named by their labels)", store.QuoteName(cache))
			}
			if other.Spec.Label() == p.Spec.Label() {
				return nil, fmt.Errorf("cache-aside: %s cannot be its own cache", cache)
			}
			if params.usesLease() && !workload.ClientSupports[store.Adder](other.Kind) {
				return nil, fmt.Errorf("cache-aside: cache %s cannot add a key only if absent, which the lease protection needs", cache)
			}
		}
		cell := workload.Cell{
			Params: recorded{params.CellParams(), cache}, Names: []string{"cache"}, Memory: params.Memory(),
			Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
				cenv := Env{DB: env.Store}
				if env.Companion != nil {
					cenv.Cache = env.Companion.Store
				}
				res, phases, err := Run(ctx, cenv, params, h)
				if res.CacheAside != nil && len(phases) > 0 && phases[0].Name == PhaseMain {
					res.CacheAside.SetCPU(serverCPU(phases[0].Companion), serverCPU(phases[0].Server))
				}
				return workload.Outcome{Phases: phases, Summary: func(c *result.Cell) { c.CacheAside, c.Capacity = res.CacheAside, res.Capacity }}, err
			},
		}
		if cache != NoCache {
			cell.Companion = cache
		}
		cells = append(cells, cell)
	}
	return cells, nil
}

// recorded is what result.json keeps of a cell: its parameters and its cache.
type recorded struct {
	params any
	cache  string
}

func (r recorded) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.params)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["cache"] = r.cache
	return json.Marshal(m)
}

// serverCPU is a managed server's CPU seconds over a phase, -1 when it was
// not measured (an external or in-process store).
func serverCPU(c *metrics.ServerCost) float64 {
	if c == nil {
		return -1
	}
	return c.CPUS
}
