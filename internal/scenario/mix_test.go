package scenario

import (
	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/internal/workload/mix"
	"strings"
	"testing"
)

func TestMixFieldsAndDefaults(t *testing.T) {
	src := `name: t
targets: [memory, redis]
workloads:
  - type: mix
  - type: mix
    name: writes
    read_ratio: 0
    key_dist: zipfian
    keyspace: 5000
    load: {clients: 4, duration: 2s}
`
	s, err := Parse("t.yaml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	r, err := s.Resolve(registry(), all.Types(), false)
	if err != nil {
		t.Fatal(err)
	}
	d, w := r.Scenario.Workloads[0].Spec.(*mix.Spec), r.Scenario.Workloads[1].Spec.(*mix.Spec)
	if d.ReadRatio == nil || *d.ReadRatio != 0.9 || d.KeyDist != "uniform" || d.Keyspace != 100000 || d.ValueSize != 100 || d.KeyMode != "sequential" {
		t.Errorf("defaults: %+v", d)
	}
	if l := s.EffectiveLoad(all.Types(), r.Scenario.Workloads[0]); l.Clients != 50 || l.Ops != 100000 {
		t.Errorf("default load %+v, want 50 clients and 100000 ops", l)
	}
	// read_ratio: 0 is all sets, not "unset".
	if w.ReadRatio == nil || *w.ReadRatio != 0 || w.KeyDist != "zipfian" || w.Keyspace != 5000 {
		t.Errorf("given fields: %+v", w)
	}
}

func TestMixErrorsNameFileAndLine(t *testing.T) {
	head := "name: t\ntargets: [memory]\nworkloads:\n"
	for _, c := range []struct{ src, want string }{
		{head + "  - type: mix\n    read_ratio: 1.5\n", "t.yaml:4: mix: read ratio must be between 0 (all sets) and 1 (all gets), got 1.5"},
		{head + "  - type: mix\n    read_ratio: -0.5\n", "t.yaml:4: mix: read ratio must be between 0"},
		{head + "  - type: mix\n    key_dist: hotspot\n", `t.yaml:4: mix: unknown key distribution "hotspot" (valid: uniform, zipfian, sequential)`},
		{head + "  - type: mix\n    load: {pipeline: 8}\n", "t.yaml:4: mix: --pipeline is not supported"},
		{head + "  - type: mix\n    operations: [get]\n", "t.yaml:4: mix: field operations does not apply"},
		{head + "  - type: throughput\n    read_ratio: 0.5\n", "t.yaml:4: throughput: field read_ratio does not apply"},
		{head + "  - type: kv\n    key_dist: zipfian\n", "t.yaml:4: kv: field key_dist does not apply"},
		{head + "  - type: mix\n    keyspace: -3\n", "t.yaml:4: mix: keyspace must be positive"},
	} {
		s, err := Parse("t.yaml", strings.NewReader(c.src))
		if err == nil {
			s.Defaults()
			err = validate(s, registry())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}
