package scenario

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Resolved is a scenario checked against the registries and expanded into
// cells, before any work: the input is left as it was.
type Resolved struct {
	// Scenario is the input with every target parsed and every entry's
	// section decoded, overlaid and defaulted: what the run records.
	Scenario *Scenario
	Cells    []Cell
	// QuickChanges says what --quick changed from the full scenario, one
	// phrase each (e.g. "repeat 3→1", "keys [1000 10000 100000]→[1000]");
	// nil without --quick.
	QuickChanges []string
}

// Cell is one planned measurement: a workload entry's cell on one target.
type Cell struct {
	Target Target
	Type   string // the workload type: kv, throughput, …
	Entry  string // the entry's label in cell ids
	// Named says the entry has a name of its own (not just its type).
	Named bool
	// Net is the network between the clients and the target; nil: direct.
	Net *netem.Config
	// Stall stops the managed server in each measured phase; nil: none.
	Stall *target.Stall
	// CompanionTarget is the target of Cell.Companion; nil for none.
	CompanionTarget *Target
	workload.Cell
}

// KeepsData says an entry asks to keep its target's data (payments' keep).
func (r *Resolved) KeepsData() bool {
	for _, w := range r.Scenario.Workloads {
		if k, ok := w.Spec.(workload.Keeper); ok && k.KeepsData() {
			return true
		}
	}
	return false
}

// ChecksMachine says an entry judges latency against a bound
// (workload.MachineChecker): the run measures the machine first.
func (r *Resolved) ChecksMachine() bool {
	for _, w := range r.Scenario.Workloads {
		if m, ok := w.Spec.(workload.MachineChecker); ok && m.ChecksMachine() {
			return true
		}
	}
	return false
}

// Defaults fills what the file leaves out at the scenario's level.
func (s *Scenario) Defaults() {
	if s.Seed == 0 {
		s.Seed = 42
	}
}

// EffectiveLoad is the load a workload runs with: its type's defaults, the
// scenario's load, then the workload's own.
func (s *Scenario) EffectiveLoad(types workload.Registry, w Workload) Load {
	var def Load
	if t, ok := types.Lookup(w.Type); ok {
		d := t.DefaultLoad()
		def = Load{Clients: d.Clients, Ops: d.Ops}
	}
	return def.Overlay(&s.Load).Overlay(w.Load)
}

// ApplyQuick shrinks the scenario as its quick section says: op counts and
// durations here, workload fields when Resolve lays them over the entries.
func (s *Scenario) ApplyQuick(types workload.Registry) error {
	if s.Quick == nil {
		return fmt.Errorf("%s has no quick mode", s.Name)
	}
	full := *s
	full.Workloads = slices.Clone(s.Workloads)
	full.overlays = slices.Clone(s.overlays)
	s.beforeQuick = &full
	q := s.Quick
	if q.Repeat > 0 {
		s.Repeat = q.Repeat
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		// Shrink within the workload's own mode: an op count stays an op
		// count (its warm-up ops still apply), a duration stays a duration.
		eff := s.EffectiveLoad(types, *w)
		l := Load{}.Overlay(w.Load)
		switch {
		case eff.Ops > 0 && q.Ops > 0:
			l.Ops, l.Duration = min(q.Ops, eff.Ops), 0
		case eff.Duration > 0 && q.Duration > 0:
			l.Ops, l.Duration = 0, min(q.Duration, eff.Duration)
			if q.Warmup > 0 {
				l.Warmup = min(q.Warmup, eff.Warmup)
			}
		}
		w.Load = &l
	}
	if q.fields != nil && len(q.fields.Content) > 0 {
		s.overlays = append([]overlay{{origin: s.Source + ": quick", fields: q.fields}}, s.overlays...)
	}
	return nil
}

// ApplyFlags lays the command line's overrides over the scenario with
// apply and, after ApplyQuick, over the full scenario the quick note is
// computed against too: a flag the user gave (--duration, --stores) is not
// something --quick changed.
func (s *Scenario) ApplyFlags(apply func(*Scenario) error) error {
	if err := apply(s); err != nil {
		return err
	}
	if s.beforeQuick != nil {
		return apply(s.beforeQuick)
	}
	return nil
}

// Resolve checks the scenario against the store and workload registries
// and expands it into cells, before any work. keep says the run leaves its
// targets' data in place. Its error is one line: it ends up as one line on
// the terminal.
func (s *Scenario) Resolve(stores target.Registry, types workload.Registry, keep bool) (*Resolved, error) {
	r, err := s.resolve(stores, types, keep)
	if err != nil {
		return nil, oneLine{err}
	}
	r.QuickChanges = s.quickNote(r, stores, types, keep)
	return r, nil
}

func (s *Scenario) where(line int) string {
	if line > 0 {
		return s.Source + ":" + strconv.Itoa(line)
	}
	return s.Source
}

func (s *Scenario) resolve(stores target.Registry, types workload.Registry, keep bool) (*Resolved, error) {
	out := *s
	out.overlays = nil
	if err := out.checkTop(); err != nil {
		return nil, err
	}
	targets, err := s.resolveTargets(stores)
	if err != nil {
		return nil, err
	}
	out.Targets = targets
	out.Workloads = slices.Clone(s.Workloads)
	for i := range out.Workloads {
		if err := s.decode(types, &out.Workloads[i]); err != nil {
			return nil, err
		}
	}
	if err := s.checkOverlays(types); err != nil {
		return nil, err
	}
	r := &Resolved{Scenario: &out}
	labels := map[string]bool{}
	for _, w := range out.Workloads {
		if labels[w.Label()] {
			return nil, fmt.Errorf("%s: two workloads are called %s (give one a name)", s.where(w.Line), w.Label())
		}
		labels[w.Label()] = true
		cells, err := out.expand(stores, types, w, keep)
		if err != nil {
			return nil, err
		}
		r.Cells = append(r.Cells, cells...)
	}
	// Grouped by target, so each managed server starts once.
	var byTarget []Cell
	for _, t := range out.Targets {
		for _, c := range r.Cells {
			if c.Target.Spec.Label() == t.Spec.Label() {
				byTarget = append(byTarget, c)
			}
		}
	}
	r.Cells = byTarget
	return r, nil
}

// checkTop checks the scenario's own fields.
func (s *Scenario) checkTop() error {
	if len(s.Targets) == 0 {
		return fmt.Errorf("%s: no targets", s.Source)
	}
	if s.ClientThreads < 0 || s.ClientThreads > MaxClientThreads {
		return fmt.Errorf("%s: client_threads %d: want 1 to %d (or leave it out: one per CPU)", s.Source, s.ClientThreads, MaxClientThreads)
	}
	for _, r := range []struct {
		field string
		n     int
	}{{"repeat", s.Repeat}, {"quick: repeat", s.quickRepeat()}} {
		if r.n < 0 || r.n > MaxRepeat {
			return fmt.Errorf("%s: %s %d: want 1 to %d (or leave it out: once)", s.Source, r.field, r.n, MaxRepeat)
		}
	}
	if len(s.Workloads) == 0 {
		return fmt.Errorf("%s: no workloads", s.Source)
	}
	if err := checkName(s.Source, "the scenario's name", s.Name); err != nil {
		return err
	}
	for _, t := range s.Targets {
		if err := checkName(s.where(t.Line), "a target's name", t.Spec.Name); err != nil {
			return err
		}
	}
	for _, w := range s.Workloads {
		if err := checkName(s.where(w.Line), "a workload's name", w.Name); err != nil {
			return err
		}
	}
	return nil
}

// checkName refuses a name that holds a URL: names go into cell ids, tables
// and the result, and a URL's password in a shape no redaction finds would
// go with it. The name is not quoted.
func checkName(where, what, name string) error {
	if strings.Contains(name, "://") {
		return fmt.Errorf("%s: %s is a URL; a name is a word (a target's URL goes in url:)", where, what)
	}
	return nil
}

// resolveTargets parses every target against the store registry.
func (s *Scenario) resolveTargets(reg target.Registry) ([]Target, error) {
	out := slices.Clone(s.Targets)
	seen := map[string]bool{}
	for i := range out {
		t := &out[i]
		switch {
		case t.Raw != "":
			spec, err := reg.Parse(t.Raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.where(t.Line), err)
			}
			t.Spec = spec
		case t.Spec.URL != "":
			spec, err := reg.Parse(t.Spec.URL)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.where(t.Line), err)
			}
			if t.Spec.Store != "" && t.Spec.Store != spec.Store {
				return nil, fmt.Errorf("%s: store %s does not match URL scheme (%s)", s.where(t.Line), t.Spec.Store, spec.Store)
			}
			t.Spec.Store = spec.Store
			fallthrough
		default:
			if err := reg.Check(t.Spec); err != nil {
				return nil, fmt.Errorf("%s: %v", s.where(t.Line), err)
			}
		}
		if seen[t.Spec.Label()] {
			return nil, fmt.Errorf("%s: target %s is listed twice (give one a name)", s.where(t.Line), t.Spec.Label())
		}
		seen[t.Spec.Label()] = true
	}
	return out, nil
}

// decode reads w's own section as its type defines it, lays the overlays
// over it and fills its defaults.
func (s *Scenario) decode(types workload.Registry, w *Workload) error {
	typ, ok := types.Lookup(w.Type)
	if !ok {
		return fmt.Errorf("%s: %v", s.where(w.Line), types.Unknown(w.Type))
	}
	spec := typ.NewSpec()
	if w.node != nil {
		if line, err := checkEntry(w.node, typ.Name(), spec, types); err != nil {
			return fmt.Errorf("%s: %v", s.where(cmp.Or(line, w.Line)), err)
		}
		if line, err := checkNumbers(w.node, reflect.TypeOf(spec)); err != nil {
			return fmt.Errorf("%s: %v", s.where(line), err)
		}
		if err := w.node.Decode(spec); err != nil {
			return fmt.Errorf("%s", locate(s.Source, err))
		}
	}
	for _, o := range s.overlays {
		if _, err := checkNumbers(o.fields, reflect.TypeOf(spec)); err != nil {
			return fmt.Errorf("%s: %v", o.origin, err)
		}
		if err := o.fields.Decode(spec); err != nil {
			return fmt.Errorf("%s: %v", o.origin, err)
		}
	}
	spec.Defaults()
	w.Spec = spec
	return nil
}

// checkEntry refuses a key in the entry that neither the common fields nor
// the type's section have: a field of another type "does not apply".
// The line is the offending key's, 0 for the entry's.
func checkEntry(n *yaml.Node, typ string, spec workload.Spec, types workload.Registry) (int, error) {
	own := yamlFields(reflect.TypeOf(spec))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, ok := fieldType(reflect.TypeOf(common{}), k.Value); ok {
			if key, in := unknownField(n.Content[i+1], mustField(reflect.TypeOf(common{}), k.Value)); key != nil {
				return key.Line, fmt.Errorf("field %s not found in %s", key.Value, describeType(in))
			}
			if _, stalls := spec.(workload.Staller); k.Value == "stall" && !stalls {
				return 0, fmt.Errorf("%s: field stall does not apply (a stall needs timed phases that a stopped server holds up: %s)", typ, strings.Join(typesWhose[workload.Staller](types), ", "))
			}
			continue
		}
		if !slices.Contains(own, k.Value) {
			if slices.ContainsFunc(types, func(t workload.Type) bool { return slices.Contains(yamlFields(reflect.TypeOf(t.NewSpec())), k.Value) }) {
				return 0, fmt.Errorf("%s: field %s does not apply (its fields: %s)", typ, k.Value, strings.Join(own, ", "))
			}
			return k.Line, fmt.Errorf("field %s not found in workload %s (its fields: type, name, load, targets, %s)", k.Value, typ, strings.Join(own, ", "))
		}
		if key, in := unknownField(n.Content[i+1], mustField(reflect.TypeOf(spec), k.Value)); key != nil {
			return key.Line, fmt.Errorf("field %s not found in %s", key.Value, describeType(in))
		}
	}
	return 0, nil
}

// typesWhose names the types whose Spec is an I (workload.Staller,
// workload.Sharder): the registry answers, so an error's list of them
// follows the types this binary has.
func typesWhose[I any](types workload.Registry) []string {
	var out []string
	for _, t := range types {
		if _, ok := t.NewSpec().(I); ok {
			out = append(out, t.Name())
		}
	}
	return out
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func mustField(t reflect.Type, name string) reflect.Type {
	ft, _ := fieldType(t, name)
	return ft
}

// describeType names a section's type for an error: its fields.
func describeType(t reflect.Type) string {
	return "this section (its fields: " + strings.Join(yamlFields(t), ", ") + ")"
}

// checkOverlays refuses a field of the quick section or the command line
// that no entry of the scenario has: it would change nothing.
func (s *Scenario) checkOverlays(types workload.Registry) error {
	for _, o := range s.overlays {
		for i := 0; i+1 < len(o.fields.Content); i += 2 {
			k := o.fields.Content[i]
			used := false
			for _, w := range s.Workloads {
				t, ok := types.Lookup(w.Type)
				if !ok {
					continue
				}
				if ft, ok := fieldType(reflect.TypeOf(t.NewSpec()), k.Value); ok {
					used = true
					if key, in := unknownField(o.fields.Content[i+1], ft); key != nil {
						return fmt.Errorf("%s: field %s not found in %s", o.origin, key.Value, describeType(in))
					}
				}
			}
			if !used {
				var has []string
				for _, w := range s.Workloads {
					if t, ok := types.Lookup(w.Type); ok {
						has = append(has, fmt.Sprintf("%s: field %s does not apply (its fields: %s)", w.Label(), k.Value, strings.Join(yamlFields(reflect.TypeOf(t.NewSpec())), ", ")))
					}
				}
				return fmt.Errorf("%s: %s", o.origin, strings.Join(slices.Compact(has), "; "))
			}
		}
	}
	return nil
}

// expand checks entry w against every target it applies to and makes its cells.
func (s *Scenario) expand(stores target.Registry, types workload.Registry, w Workload, keep bool) ([]Cell, error) {
	budget, budgetWhy := workload.MemoryBudget()
	typ, _ := types.Lookup(w.Type)
	l := s.EffectiveLoad(types, w)
	wl := l.Workload()
	fail := func(err error) ([]Cell, error) { return nil, fmt.Errorf("%s: %v", s.where(w.Line), err) }
	if err := w.Spec.Validate(wl, s.Seed); err != nil {
		return fail(err)
	}
	net, err := l.Network()
	if err != nil {
		return fail(fmt.Errorf("%s: %v", w.Label(), err))
	}
	var stall *target.Stall
	if w.Stall != nil {
		if err := w.Stall.check(l); err != nil {
			return fail(fmt.Errorf("%s: %v", w.Label(), err))
		}
		st := w.Stall.Target()
		stall = &st
	}
	if _, ok := w.Spec.(workload.Sharder); !ok && !s.Shard.Whole() {
		return fail(fmt.Errorf("%s cannot run in shards (--shard): only %s split their keys and add up in storebench merge", w.Label(), andList(typesWhose[workload.Sharder](types))))
	}
	// The whole load is validated above; each shard runs its share of it.
	share, err := wl.Share(s.Shard)
	if err != nil {
		return fail(fmt.Errorf("%s: %v", w.Label(), err))
	}
	for _, name := range w.Targets {
		if !slices.ContainsFunc(s.Targets, func(t Target) bool { return t.Spec.Label() == name }) {
			return fail(fmt.Errorf("workload %s names target %s, which the scenario does not have", w.Label(), store.QuoteName(name)))
		}
	}
	others := s.others(stores)
	byLabel := map[string]Target{}
	for _, t := range s.Targets {
		byLabel[t.Spec.Label()] = t
	}
	var cells []Cell
	for _, t := range s.Targets {
		if !w.AppliesTo(t.Spec.Label()) {
			continue
		}
		k, _ := stores.Lookup(t.Spec.Store)
		if stall != nil {
			if err := checkStallTarget(k, t.Spec); err != nil {
				return fail(fmt.Errorf("%s: %v", w.Label(), err))
			}
		}
		if err := k.NoNetwork(); net != nil && err != nil {
			return fail(fmt.Errorf("%s: store %s %v", w.Label(), k.Name, err))
		}
		if err := typ.Supports(k); err != nil {
			return fail(err)
		}
		if wl.Pipeline > 1 && !k.Batches {
			return fail(fmt.Errorf("store %s cannot send several ops per round trip (pipeline, batch); drop it from this workload's targets", k.Name))
		}
		wcells, err := s.plan(w, k, t, share, wl, others, keep)
		if err != nil {
			return fail(err)
		}
		if err := workload.CheckDistinct(wcells); err != nil {
			return fail(fmt.Errorf("%s on %s: %v", w.Label(), t.Spec.Label(), err))
		}
		for _, c := range wcells {
			if err := workload.CheckMemory(c.Memory, k.DataInProcess, budget, budgetWhy); err != nil {
				return fail(fmt.Errorf("%s on %s %v", w.Label(), t.Spec.Label(), err))
			}
			cell := Cell{Target: t, Type: w.Type, Entry: w.Label(), Named: w.Name != "" && w.Name != w.Type, Net: net, Stall: stall, Cell: c}
			if c.Companion != "" {
				ct := byLabel[c.Companion]
				cell.CompanionTarget = &ct
			}
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

// plan is entry w's cells on target t (of kind k), running share of the
// whole load.
func (s *Scenario) plan(w Workload, k target.Kind, t Target, share, whole workload.Load, others map[string]workload.Target, keep bool) ([]workload.Cell, error) {
	return w.Spec.Cells(workload.Plan{Load: share, Seed: s.Seed, Kind: k, Spec: t.Spec, Keep: keep, Others: others, Shard: s.Shard, Whole: whole})
}

// others is every target of the resolved scenario by label, as a
// workload's plan sees them (cache-aside's companion database).
func (s *Scenario) others(stores target.Registry) map[string]workload.Target {
	out := map[string]workload.Target{}
	for _, t := range s.Targets {
		k, _ := stores.Lookup(t.Spec.Store)
		out[t.Spec.Label()] = workload.Target{Spec: t.Spec, Kind: k}
	}
	return out
}
