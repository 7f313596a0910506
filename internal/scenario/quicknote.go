package scenario

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// quickChanges says what --quick changed, one phrase each ("repeat 3→1",
// "keys [1000 10000 100000 1000000]→[1000 10000]", "duration 2h0m0s→8s
// (payments)", "12 of 84 cells"), from the full scenario's entries fw
// (decoded) and its cells on each target, against the quick run resolved,
// so the note cannot disagree with what runs. An entry's label is named
// when the change is not every entry's.
func quickChanges(full *Scenario, fw []Workload, fullCells map[string]int, quick *Resolved, types workload.Registry) []string {
	var out []string
	if a, b := max(full.Repeat, 1), max(quick.Scenario.Repeat, 1); a != b {
		out = append(out, fmt.Sprintf("repeat %d→%d", a, b))
	}
	entries := map[string][]string{} // change → the labels of the entries it applies to
	var order []string
	qw := quick.Scenario.Workloads
	for i := range min(len(fw), len(qw)) {
		before := flatFields(fw[i].Spec, full.EffectiveLoad(types, fw[i]))
		after := flatFields(qw[i].Spec, quick.Scenario.EffectiveLoad(types, qw[i]))
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if b, ok := before[k]; ok && b != after[k] {
				c := fmt.Sprintf("%s %s→%s", k, b, after[k])
				if entries[c] == nil {
					order = append(order, c)
				}
				entries[c] = append(entries[c], qw[i].Label())
			}
		}
	}
	for _, c := range order {
		switch n := len(entries[c]); {
		case n > 3 && n < len(qw):
			c += fmt.Sprintf(" (%d of %d entries)", n, len(qw))
		case n < len(qw):
			c += " (" + strings.Join(entries[c], ", ") + ")"
		}
		out = append(out, c)
	}
	// Over the quick run's targets only: --stores may have left some out.
	labels := map[string]bool{}
	for _, c := range quick.Cells {
		labels[c.Target.Spec.Label()] = true
	}
	var all int
	for label := range labels {
		all += fullCells[label]
	}
	if all != len(quick.Cells) {
		out = append(out, fmt.Sprintf("%d of %d cells", len(quick.Cells), all))
	}
	return out
}

// flatFields is an entry's section and load as dotted names and the values
// a scenario file would spell ("sessions.time_scale", "duration": "8s"):
// the section through YAML (time.Duration as "8s"), the load through JSON
// (its Duration's own form).
func flatFields(spec workload.Spec, load Load) map[string]string {
	out := map[string]string{}
	var m map[string]any
	if b, err := yaml.Marshal(spec); err == nil && yaml.Unmarshal(b, &m) == nil {
		flatten("", m, out)
	}
	m = nil
	if b, err := json.Marshal(load); err == nil && json.Unmarshal(b, &m) == nil {
		flatten("", m, out)
	}
	return out
}

func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			flatten(prefix+k+".", sub, out)
			continue
		}
		out[prefix+k] = fmt.Sprint(v)
	}
}

// quickNote says what --quick changed (quickChanges) against the scenario
// as ApplyQuick found it. Not a second Resolve: only what --quick touches
// is made again, each entry's section decoded without the quick fields and
// its cells planned with the full load, on the targets r resolved (the
// same: ApplyFlags gave both scenarios the same --stores). Nil without
// --quick, or when the full run would not plan (a flag may fit only the
// quick one).
func (s *Scenario) quickNote(r *Resolved, stores target.Registry, types workload.Registry, keep bool) []string {
	full := s.beforeQuick
	if full == nil {
		return nil
	}
	others := r.Scenario.others(stores)
	ws := slices.Clone(full.Workloads)
	cells := map[string]int{} // target label → the full run's cells on it
	for i := range ws {
		w := &ws[i]
		if err := full.decode(types, w); err != nil {
			return nil
		}
		wl := full.EffectiveLoad(types, *w).Workload()
		if w.Spec.Validate(wl, r.Scenario.Seed) != nil {
			return nil
		}
		share, err := wl.Share(r.Scenario.Shard)
		if err != nil {
			return nil
		}
		for _, t := range r.Scenario.Targets {
			if !w.AppliesTo(t.Spec.Label()) {
				continue
			}
			k, _ := stores.Lookup(t.Spec.Store)
			wc, err := r.Scenario.plan(*w, k, t, share, wl, others, keep)
			if err != nil {
				return nil
			}
			cells[t.Spec.Label()] += len(wc)
		}
	}
	return quickChanges(full, ws, cells, r, types)
}
