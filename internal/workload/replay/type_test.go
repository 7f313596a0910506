package replay

import (
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/workload"
)

// An entry's trace is one file or a list; its cells are each trace at each
// speed, named by the speed alone when there is one trace.
func TestSpecTraces(t *testing.T) {
	for _, c := range []struct {
		yaml   string
		traces []string
		cells  int
		names  []string
	}{
		{"trace: sample:csv\nspeed: ['1', max]", []string{"sample:csv"}, 2, []string{"speed"}},
		{"trace: [sample:csv, sample:twitter]", []string{"sample:csv", "sample:twitter"}, 2, []string{"trace", "speed"}},
	} {
		var s Spec
		if err := yaml.Unmarshal([]byte(c.yaml), &s); err != nil {
			t.Fatal(err)
		}
		s.Defaults()
		if !slices.Equal(s.Trace, c.traces) {
			t.Errorf("%q: traces %q, want %q", c.yaml, s.Trace, c.traces)
		}
		l := workload.Load{Clients: 2}
		if err := s.Validate(l, 1); err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		cells, err := s.Cells(workload.Plan{Load: l, Seed: 1})
		if err != nil || len(cells) != c.cells || !slices.Equal(cells[0].Names, c.names) {
			t.Errorf("%q: %d cells named %v (%v), want %d named %v", c.yaml, len(cells), cells[0].Names, err, c.cells, c.names)
		}
	}
	var s Spec
	s.Defaults()
	if err := s.Validate(workload.Load{Clients: 1}, 1); err == nil {
		t.Error("an entry without a trace validated")
	}
}
