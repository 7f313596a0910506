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
// (payments)", "12 of 84 cells"), from the two resolved scenarios, so the
// note cannot disagree with what runs. An entry's label is named when the
// change is not every entry's.
func quickChanges(full, quick *Resolved, types workload.Registry) []string {
	var out []string
	if a, b := max(full.Scenario.Repeat, 1), max(quick.Scenario.Repeat, 1); a != b {
		out = append(out, fmt.Sprintf("repeat %d→%d", a, b))
	}
	entries := map[string][]string{} // change → the labels of the entries it applies to
	var order []string
	fw, qw := full.Scenario.Workloads, quick.Scenario.Workloads
	for i := range min(len(fw), len(qw)) {
		before := flatFields(fw[i].Spec, full.Scenario.EffectiveLoad(types, fw[i]))
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
	for _, c := range full.Cells {
		if labels[c.Target.Spec.Label()] {
			all++
		}
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

// resolveFull resolves the scenario as it was before ApplyQuick, for the
// note of what --quick changed; nil when there is none to make.
func (s *Scenario) resolveFull(stores target.Registry, types workload.Registry, keep bool) *Resolved {
	if s.beforeQuick == nil {
		return nil
	}
	full, err := s.beforeQuick.resolve(stores, types, keep)
	if err != nil {
		return nil // the full run need not be valid here (a flag may fit only the quick one)
	}
	return full
}
