package all

import (
	"reflect"
	"testing"
)

// Every registered type has a name of its own, a help line for `list`, and
// a section that a scenario entry can be decoded into.
func TestEveryTypeIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range Types() {
		name := typ.Name()
		if name == "" || seen[name] {
			t.Errorf("type %T: name %q empty or taken twice", typ, name)
		}
		seen[name] = true
		if typ.Help() == "" {
			t.Errorf("workload %s has no help line for list", name)
		}
		spec := typ.NewSpec()
		if spec == nil || reflect.TypeOf(spec).Kind() != reflect.Pointer {
			t.Errorf("workload %s: NewSpec gives %T, want a pointer a scenario entry decodes into", name, spec)
			continue
		}
		// One name for an entry's type in every package (its nested
		// sections are Section), so a reader looks for the same word.
		if n := reflect.TypeOf(spec).Elem().Name(); n != "Spec" {
			t.Errorf("workload %s: its entry type is %s, want Spec", name, n)
		}
	}
}
