package kinds

import (
	"testing"
)

// Every kind has a name of its own, a line for `list`, a prototype the
// workloads check capabilities on, and a way to open it; no URL scheme
// selects two kinds.
func TestEveryKindIsComplete(t *testing.T) {
	names, schemes := map[string]bool{}, map[string]string{}
	for _, k := range All() {
		if k.Name == "" || names[k.Name] {
			t.Errorf("kind %q: name empty or taken twice", k.Name)
		}
		names[k.Name] = true
		if k.Description == "" || k.Prototype == nil || k.ClientPrototype == nil || k.Open == nil {
			t.Errorf("kind %s lacks a description, prototype, client prototype or Open", k.Name)
		}
		for _, s := range k.Schemes {
			if other, ok := schemes[s]; ok {
				t.Errorf("scheme %s selects both %s and %s", s, other, k.Name)
			}
			schemes[s] = k.Name
		}
	}
}
