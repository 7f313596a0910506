package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
)

// Type is one kind of workload, registered once (internal/workload/all lists them):
// its name and help, the load it defaults to, and its section of a
// scenario entry. Nothing above the workloads asks which workload it is
// holding; each question is a method here.
type Type interface {
	Name() string
	// Help is its line in `storebench list`.
	Help() string
	// Supports says why stores of kind k cannot run it (nil: they can),
	// from their capabilities, before any work.
	Supports(k target.Kind) error
	// DefaultLoad is the load under the scenario's own: the clients and
	// ops a workload entry gets when neither the file nor the flags say.
	DefaultLoad() Load
	// NewSpec is an empty section of this type for a scenario entry to be
	// decoded into: a pointer to a struct whose yaml tags are the entry's
	// own fields (beside type, name, load, stall and targets).
	NewSpec() Spec
}

// Spec is one workload entry's own section, decoded from the scenario.
type Spec interface {
	// Defaults fills what the entry leaves out.
	Defaults()
	// Validate checks the section under the entry's effective load, for
	// every target alike (a target's own checks are Cells').
	Validate(load Load, seed uint64) error
	// Cells expands the section into the cells of one target, after
	// checking that the target can run them (its capabilities, by type
	// assertion on the kind's prototype, before any work).
	Cells(p Plan) ([]Cell, error)
}

// Plan is what a Spec needs to know to expand into one target's cells.
type Plan struct {
	Load Load
	Seed uint64
	Kind target.Kind
	Spec target.Spec
	// Others are the scenario's other targets, by label, for a cell that
	// runs on two (Cell.Companion).
	Others map[string]Target
	// Keep: the run leaves the target's data in place (run --keep).
	Keep bool
	// Shard is the part of the run this process makes (run --shard); Load
	// is its share already, of Whole, the run's whole load. A workload
	// that writes keys of its own writes only the shard's part of them
	// (Shard.Range, Part.WriteKey), so shards never overwrite each other's
	// keys.
	Shard Shard
	Whole Load
}

// MachineChecker is a Spec whose verdict judges latency against a bound
// (capacity at an SLO): the run first measures what the machine itself
// does to latency (storebench doctor, briefly) and records it beside the
// verdict. ChecksMachine says whether this entry judges one.
type MachineChecker interface {
	ChecksMachine() bool
}

// Staller is a Spec whose phases may have their server stopped for a while
// (a scenario's stall): timed phases of ops the stall holds up.
type Staller interface {
	Stalls()
}

// Target is one of a scenario's targets: its spec and its kind.
type Target struct {
	Spec target.Spec
	Kind target.Kind
}

// Sharder is a Spec whose cells run their part of a sharded run (run
// --shard): each shard takes its share of the load and writes only its
// part of the keys (Plan.Shard), and its phases add up in storebench
// merge. Other workloads refuse --shard before any work.
type Sharder interface {
	Shards()
}

// Keeper is a Spec that asks to keep the target's data after the run
// (payments' keep), which only a target by URL allows.
type Keeper interface {
	KeepsData() bool
}

// Cell is one measurement a workload entry makes on one target.
type Cell struct {
	// Params are the typed parameters the cell runs with; result.json
	// records them (Record), so they cannot disagree with what ran.
	Params any
	// Names are the parameters that tell this cell from the entry's other
	// cells in its id, e.g. "keys=1000".
	Names []string
	// KillsServer marks a cell that kills its managed server on purpose;
	// the runner's watchdog must not take that for a server dying.
	KillsServer bool
	// Memory is what the cell needs in storebench's own process, checked
	// against the machine before any work.
	Memory Estimate
	// Companion is the label of another target of the scenario that the
	// cell runs on beside its own (cache-aside: the cache in front of the
	// database), started for the cell and passed as Env.Companion.
	Companion string
	// Replica asks the runner for a streaming replica of the managed
	// server, started for this cell and passed as Env.ReplicaURL.
	Replica bool
	// Run measures the cell. It returns what it measured so far also when
	// it fails half-way.
	Run func(ctx context.Context, env Env, h Hooks) (Outcome, error)
}

// Env is what a cell runs against.
type Env struct {
	Store store.Store
	// Kind is the target's store kind; Info what the store said of itself.
	Kind string
	Info store.Info
	// Server is the managed server of Store; nil for external and
	// in-process targets, which storebench does not restart or kill.
	Server Server
	// Cluster is the managed cluster (or pool) of Store; nil otherwise.
	Cluster ClusterServer
	// ReplicaURL is a streaming replica of Server (Cell.Replica).
	ReplicaURL string
	// Companion is the cell's second target (Cell.Companion); nil for none.
	Companion *Env
	// RTT is the round trip the cell's network path adds between the
	// clients and the target (--rtt); 0 for a direct cell.
	RTT time.Duration
}

// Server is what a workload may do to a managed server: restart it with
// other settings (sessions' designs), or crash it and bring it back on the
// same data dir (durability).
type Server interface {
	Reconfigure(ctx context.Context, settings map[string]string) error
	Kill() error
	// Shutdown stops it cleanly, keeping its data dir for Restart.
	Shutdown(ctx context.Context) error
	Restart(ctx context.Context) error
	// Describe names the server for a report: its kind and process id.
	Describe() (kind string, pid int)
	// Dir is its data directory.
	Dir() string
	// LogTail is the last n lines of its log.
	LogTail(n int) string
}

// ClusterServer is what a workload may do to a managed cluster's nodes
// (a Redis Cluster, a memcached pool): kill one and bring it back
// (durability's node kill). Nodes are numbered 0 to NodeCount()-1.
type ClusterServer interface {
	NodeCount() int
	// Role is node i's role at the start: primary, replica, or server (a
	// pool's).
	Role(i int) string
	// Addr is node i's host:port, as store.KeyNoder names it.
	Addr(i int) string
	Kill(i int) error
	NodeRunning(i int) bool
	// RestartNode starts killed node i again on its data dir and port.
	RestartNode(ctx context.Context, i int) error
	// WaitHealthy waits until every node serves again as one cluster.
	WaitHealthy(ctx context.Context) error
}

// Outcome is what a cell measured.
type Outcome struct {
	Phases []metrics.Phase
	// Summary puts the workload's own figures into the result cell
	// (payments' transfers, sessions' phase B, durability's losses); nil
	// for none.
	Summary func(c *result.Cell)
}

// Registry is the workload types this binary runs, in `list` order.
type Registry []Type

// Lookup finds a type by name.
func (r Registry) Lookup(name string) (Type, bool) {
	for _, t := range r {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Names lists the types' names.
func (r Registry) Names() []string {
	out := make([]string, len(r))
	for i, t := range r {
		out[i] = t.Name()
	}
	return out
}

// Unknown is the error for a type name the registry does not have.
func (r Registry) Unknown(name string) error {
	if name == "" {
		return fmt.Errorf("workload without a type (valid: %s)", strings.Join(r.Names(), ", "))
	}
	return fmt.Errorf("unknown workload %q (valid: %s)", name, strings.Join(r.Names(), ", "))
}

// Record is a cell's typed parameters as result.json keeps them: their JSON
// fields, with a nested load (see Load's JSON) at the top level beside the
// workload's own, as every cell records its load.
func Record(params any) (map[string]any, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("record params: %w", err)
	}
	// Numbers stay as written: a count of 1000000 is not 1e+06 in a cell id.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("record params: %w", err)
	}
	if l, ok := m["load"].(map[string]any); ok {
		delete(m, "load")
		for k, v := range l {
			if _, own := m[k]; !own {
				m[k] = v
			}
		}
	}
	return m, nil
}

// Supports reports whether the kind's stores implement capability C,
// checked on the kind's prototype (a nil store of its concrete type).
func Supports[C any](k target.Kind) bool {
	_, ok := k.Prototype.(C)
	return ok
}

// ClientSupports reports whether the kind's clients implement capability
// C, checked on the kind's client prototype.
func ClientSupports[C any](k target.Kind) bool {
	_, ok := k.ClientPrototype.(C)
	return ok
}

// Requires is a workload's check (Define's supports) that a store has
// capability C; what says why the workload needs it.
func Requires[C any](workload, what string) func(k target.Kind) error {
	return func(k target.Kind) error {
		if !Supports[C](k) {
			return Unsupported(workload, k, what)
		}
		return nil
	}
}

// Unsupported is the error for a store that lacks what a workload needs.
func Unsupported(workload string, k target.Kind, what string) error {
	return fmt.Errorf("store %s does not support workload %s (%s)", k.Name, workload, what)
}

// Define makes a Type from its parts; supports nil: every store kind.
func Define(name, help string, defaultLoad Load, newSpec func() Spec, supports func(k target.Kind) error) Type {
	return defined{name, help, defaultLoad, newSpec, supports}
}

type defined struct {
	name, help string
	load       Load
	newSpec    func() Spec
	supports   func(k target.Kind) error
}

func (d defined) Name() string      { return d.name }
func (d defined) Help() string      { return d.help }
func (d defined) DefaultLoad() Load { return d.load }
func (d defined) NewSpec() Spec     { return d.newSpec() }
func (d defined) Supports(k target.Kind) error {
	if d.supports == nil {
		return nil
	}
	return d.supports(k)
}

// StoreCell is a cell that runs on the target's store alone and has no
// summary of its own.
func StoreCell(params any, mem Estimate, run func(ctx context.Context, st store.Store, h Hooks) ([]metrics.Phase, error)) Cell {
	return Cell{Params: params, Memory: mem, Run: func(ctx context.Context, env Env, h Hooks) (Outcome, error) {
		phases, err := run(ctx, env.Store, h)
		return Outcome{Phases: phases}, err
	}}
}

// Sized are a cell's parameters that estimate the cell's memory.
type Sized interface{ Memory() Estimate }

// RunCell is StoreCell for a workload whose Run takes the cell's params:
// the cell runs run(ctx, store, params, hooks).
func RunCell[P Sized](params P, run func(ctx context.Context, st store.Store, p P, h Hooks) ([]metrics.Phase, error)) Cell {
	return StoreCell(params, params.Memory(), func(ctx context.Context, st store.Store, h Hooks) ([]metrics.Phase, error) {
		return run(ctx, st, params, h)
	})
}

// CheckDistinct refuses cells of one entry on one target that share an id
// (the values of their Names): a value listed twice in a list that expands
// into cells (keys, caches, designs, modes, …) would run one cell twice
// under one id. Measuring a cell again is what a repeat is for.
func CheckDistinct(cells []Cell) error {
	seen := map[string]bool{}
	for _, c := range cells {
		params, err := Record(c.Params)
		if err != nil {
			return err
		}
		var parts []string
		for _, name := range slices.Sorted(slices.Values(c.Names)) {
			if v, ok := params[name]; ok {
				parts = append(parts, fmt.Sprintf("%s=%v", name, v))
			}
		}
		id := strings.Join(parts, "/")
		if seen[id] {
			return fmt.Errorf("%s twice: a value is listed twice; list each once (repeat, --repeat, measures a cell again)", id)
		}
		seen[id] = true
	}
	return nil
}
