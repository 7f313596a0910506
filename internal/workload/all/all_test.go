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
		if spec := typ.NewSpec(); spec == nil || reflect.TypeOf(spec).Kind() != reflect.Pointer {
			t.Errorf("workload %s: NewSpec gives %T, want a pointer a scenario entry decodes into", name, spec)
		}
	}
}
