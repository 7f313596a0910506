package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/internal/workload/hotkey"
	"github.com/storebench/storebench/internal/workload/kv"
	"github.com/storebench/storebench/internal/workload/mix"
	"github.com/storebench/storebench/suites"
)

// registry is every store kind the binary has (internal/kinds): planning
// opens none of them.
func registry() target.Registry { return kinds.All() }

// validate is what a run does with a parsed scenario before any work.
func validate(s *Scenario, reg target.Registry) error {
	_, err := s.Resolve(reg, all.Types(), false)
	return err
}

func TestParseAndValidate(t *testing.T) {
	src := `name: t
seed: 7
targets:
  - memory
  - redis:aof-always
  - {name: mine, url: "redis://u:pw@10.0.0.1:6379"}
  - store: files
    options: {fsync: "true"}
workloads:
  - type: kv
    keys: [10, 20]
load:
  clients: 3
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
	s = r.Scenario
	if got := []string{s.Targets[0].Spec.Label(), s.Targets[1].Spec.Label(), s.Targets[2].Spec.Label(), s.Targets[3].Spec.Label()}; strings.Join(got, ",") != "memory,redis:aof-always,mine,files" {
		t.Errorf("labels = %v", got)
	}
	if s.Targets[2].Spec.Store != "redis" || s.Targets[3].Spec.Options["fsync"] != "true" {
		t.Errorf("specs = %+v", s.Targets)
	}
	if s.Seed != 7 || s.Load.Clients != 3 || s.Workloads[0].Spec.(*kv.Spec).ValueSize != 100 || s.Workloads[0].Spec.(*kv.Spec).KeyMode != "random-float" {
		t.Errorf("defaults/values wrong: %+v", s)
	}
	b, err := s.Targets[2].MarshalJSON()
	if err != nil || strings.Contains(string(b), "pw") {
		t.Errorf("target JSON leaks the password: %s", b)
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ src, want string }{
		{"name: t\ntargets: [memory]\nworkloads:\n  - type: kv\n    keyz: [1]\n", "t.yaml:5: field keyz not found"},
		{"name: t\ntargets: [memory]\nworkloads:\n  - type: kv\n    keys: [0]\n", "t.yaml:4: kv: keys must be positive"},
		{"name: t\ntargets: [memory]\nworkloads:\n  - type: scan\n", `t.yaml:4: unknown workload "scan"`},
		{"name: t\ntargets:\n  - memory\n  - mongo\nworkloads:\n  - type: kv\n", `t.yaml:4: unknown store "mongo"`},
		{"name: t\ntargets:\n  - memory\n  - memory\nworkloads:\n  - type: kv\n", "listed twice"},
		{"name: t\ntargets:\n  - {store: memory, colour: red}\nworkloads:\n  - type: kv\n", "t.yaml:3: field colour not found in target"},
		{"name: t\ntargets: [files:fast]\nworkloads:\n  - type: kv\n", "store files has no profiles"},
		{"name: t\ntargets: [memory]\nworkloads:\n  - type: kv\nload: {clients: -1}\n", "kv: clients must be positive"},
		{"name: [\n", "t.yaml:"},
		{"", "empty scenario"},
	}
	for _, c := range cases {
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

func TestBuiltInSuitesParse(t *testing.T) {
	for _, name := range suites.Names() {
		b, _ := suites.Open(name)
		s, err := Parse(name, strings.NewReader(string(b)))
		if err != nil {
			t.Errorf("suite %s: %v", name, err)
			continue
		}
		if s.Name != name || s.Description == "" {
			t.Errorf("suite %s: name %q, description %q", name, s.Name, s.Description)
		}
	}
}

func TestApplyQuick(t *testing.T) {
	src := "name: t\ntargets: [memory]\nworkloads:\n  - type: kv\n    keys: [1000, 1000000]\nquick:\n  keys: [10]\n"
	s, err := Parse("t.yaml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyQuick(all.Types()); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(registry(), all.Types(), false)
	if err != nil {
		t.Fatal(err)
	}
	if keys := r.Scenario.Workloads[0].Spec.(*kv.Spec).Keys; len(keys) != 1 || keys[0] != 10 {
		t.Errorf("keys after quick = %v", keys)
	}
	s.Quick = nil
	if err := s.ApplyQuick(all.Types()); err == nil {
		t.Error("ApplyQuick without a quick section succeeded")
	}
}

// Every built-in suite validates against a registry with every store kind,
// and its article tables name targets and workloads that exist.
func TestBuiltInSuitesAreConsistent(t *testing.T) {
	reg := registry()
	for _, name := range suites.Names() {
		b, _ := suites.Open(name)
		s, err := Parse(name, strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		s.Defaults()
		r, err := s.Resolve(reg, all.Types(), false)
		if err != nil {
			t.Errorf("suite %s: %v", name, err)
			continue
		}
		s = r.Scenario
		if s.Article == nil {
			continue
		}
		labels, entries := map[string]bool{}, map[string]bool{}
		for _, tg := range s.Targets {
			labels[tg.Spec.Label()] = true
		}
		for _, w := range s.Workloads {
			entries[w.Label()] = true
		}
		for _, tb := range s.Article.Tables {
			if !entries[tb.Workload] {
				t.Errorf("suite %s, table %q: no workload named %s", name, tb.Title, tb.Workload)
			}
			for _, row := range tb.Rows {
				if !labels[row.Target] {
					t.Errorf("suite %s, table %q: no target named %s", name, tb.Title, row.Target)
				}
				if len(row.Values) != len(tb.Columns) {
					t.Errorf("suite %s, table %q, row %s: %d values for %d columns", name, tb.Title, row.Label, len(row.Values), len(tb.Columns))
				}
			}
		}
	}
}

func TestWorkloadTargetsAndQuickKeepTheMode(t *testing.T) {
	src := `name: t
targets: [memory, files]
workloads:
  - {type: kv, keys: [100], targets: [memory]}
  - {type: kv, name: timed, keys: [100], targets: [memory]}
  - {type: web, load: {duration: 10s, warmup: 2s}}
  - {type: hotkey, load: {ops: 50000, warmup_ops: 100}}
quick: {ops: 1000, duration: 1s}
`
	s, err := Parse("t.yaml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyQuick(all.Types()); err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := validate(s, registry()); err != nil {
		t.Fatal(err)
	}
	if !s.Workloads[0].AppliesTo("memory") || s.Workloads[0].AppliesTo("files") || !s.Workloads[2].AppliesTo("files") {
		t.Error("workload targets not honoured")
	}
	if l := s.EffectiveLoad(all.Types(), s.Workloads[2]); l.Duration != Duration(time.Second) || l.Ops != 0 || l.Warmup != Duration(2*time.Second) {
		t.Errorf("quick changed the web workload's mode: %+v", l)
	}
	if l := s.EffectiveLoad(all.Types(), s.Workloads[3]); l.Ops != 1000 || l.WarmupOps != 100 {
		t.Errorf("quick on the hotkey workload: %+v", l)
	}
	bad := strings.Replace(src, "targets: [memory]}", "targets: [redis]}", 1)
	s, _ = Parse("t.yaml", strings.NewReader(bad))
	s.Defaults()
	if err := validate(s, registry()); err == nil || !strings.Contains(err.Error(), `names target "redis"`) {
		t.Errorf("unknown workload target: %v", err)
	}
}

// A stall is checked before any work: it must fall inside a timed phase of
// a workload that drives a managed server.
func TestStallIsChecked(t *testing.T) {
	const head = "name: t\ntargets: [redis, memory, {name: mine, url: \"redis://10.0.0.1:6379\"}]\nworkloads:\n"
	ok := head + "  - {type: hotkey, targets: [redis], load: {duration: 3s, rate: 100}, stall: {after: 1s, for: 500ms}}\n"
	s, err := Parse("t.yaml", strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := validate(s, registry()); err != nil {
		t.Fatal(err)
	}
	if got := s.Workloads[0].Stall.Target(); got.After != time.Second || got.For != 500*time.Millisecond {
		t.Errorf("stall %+v", got)
	}
	for _, c := range []struct{ wl, want string }{
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: 1s, for: 0s}}", "t.yaml:4: hotkey: stall: for must be positive"},
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: 1s}}", "stall: for must be positive"},
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: -1s, for: 1s}}", "stall: after must not be negative"},
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: 3s, for: 1s}}", "after (3s) must fall inside the measured phase (duration 3s)"},
		{"{type: hotkey, targets: [redis], load: {ops: 1000}, stall: {after: 1s, for: 1s}}", "stall: needs a timed phase"},
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: 1s, for: soon}}", `t.yaml:4: "soon" is not a duration`},
		{"{type: hotkey, targets: [redis], load: {duration: 3s}, stall: {after: 1s, for: 1s, signal: TERM}}", "t.yaml:4: field signal not found"},
		{"{type: hotkey, targets: [memory], load: {duration: 3s}, stall: {after: 1s, for: 1s}}", "stall: target memory is an in-process store"},
		{"{type: throughput, targets: [mine], load: {duration: 3s}, stall: {after: 1s, for: 1s}}", "stall: target mine is an external server"},
		{"{type: kv, targets: [redis], stall: {after: 1s, for: 1s}}", "kv: field stall does not apply"},
	} {
		s, err := Parse("t.yaml", strings.NewReader(head+"  - "+c.wl+"\n"))
		if err == nil {
			s.Defaults()
			err = validate(s, registry())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.wl, err, c.want)
		}
	}
}

func TestRepeat(t *testing.T) {
	const body = "targets: [memory]\nworkloads:\n  - type: kv\n"
	s, err := Parse("t.yaml", strings.NewReader("name: t\nrepeat: 5\nquick:\n  repeat: 2\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := validate(s, registry()); err != nil || s.Repeat != 5 {
		t.Fatalf("repeat %d, %v", s.Repeat, err)
	}
	if err := s.ApplyQuick(all.Types()); err != nil || s.Repeat != 2 {
		t.Errorf("repeat under --quick %d, %v; want 2", s.Repeat, err)
	}
	for src, want := range map[string]string{
		"name: t\nrepeat: 101\n" + body:           "t.yaml: repeat 101: want 1 to 100",
		"name: t\nrepeat: -1\n" + body:            "t.yaml: repeat -1",
		"name: t\nquick:\n  repeat: 500\n" + body: "t.yaml: quick: repeat 500",
		"name: t\nrepeat: often\n" + body:         "t.yaml:2",
	} {
		s, err := Parse("t.yaml", strings.NewReader(src))
		if err == nil {
			s.Defaults()
			err = validate(s, registry())
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", src, err, want)
		}
	}
}

// A cache-aside entry names its caches among the scenario's targets; each
// becomes a cell that runs on its database with that cache beside it.
func TestCacheAsideCompanions(t *testing.T) {
	head := "name: t\ntargets: [postgres, redis, memcached]\nworkloads:\n  - type: cache-aside\n    targets: [postgres]\n"
	s, err := Parse("t.yaml", strings.NewReader(head+"    cache_aside: {caches: [none, redis, memcached]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	r, err := s.Resolve(registry(), all.Types(), false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Cells {
		companion := "-"
		if c.CompanionTarget != nil {
			companion = c.CompanionTarget.Spec.Label()
		}
		got = append(got, c.Target.Spec.Label()+"+"+companion)
	}
	if strings.Join(got, " ") != "postgres+- postgres+redis postgres+memcached" {
		t.Errorf("cells %v, want the database alone, then with redis, then with memcached", got)
	}
	for _, c := range []struct{ section, want string }{
		{"{caches: [nope]}", `t.yaml:4: cache-aside: cache "nope" is not a target of the scenario`},
		{"{keys: 10}", "t.yaml:4: cache-aside: cache_aside: caches is required"},
		{"{caches: [postgres]}", "t.yaml:4: cache-aside: postgres cannot be its own cache"},
	} {
		s, err := Parse("t.yaml", strings.NewReader(head+"    cache_aside: "+c.section+"\n"))
		if err == nil {
			s.Defaults()
			_, err = s.Resolve(registry(), all.Types(), false)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.section, err, c.want)
		}
	}
}

// A capacity entry's SLOs are parsed at plan time, and the load it sets
// itself (rates, durations) is refused from the file.
func TestCapacityEntryIsChecked(t *testing.T) {
	head := "name: t\ntargets: [redis]\nworkloads:\n  - type: capacity\n"
	for _, c := range []struct{ entry, want string }{
		{"    slo: [\"p99<=1ms\"]\n", ""},
		{"    read_ratio: 0.5\n", "capacity: give an SLO"},
		{"    slo: [\"p99<1ms\"]\n", "t.yaml:4: capacity: slo:"},
		{"    slo: [\"p99<=1ms\"]\n    load: {rate: 100}\n", "t.yaml:4: capacity: the search sets the rates"},
		{"    slo: [\"p99<=1ms\"]\n    keys: [10]\n", "t.yaml:4: capacity: field keys does not apply"},
	} {
		s, err := Parse("t.yaml", strings.NewReader(head+c.entry))
		if err == nil {
			s.Defaults()
			_, err = s.Resolve(registry(), all.Types(), false)
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.entry, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.entry, err, c.want)
		}
	}
}

// A workload that cannot split its keys refuses --shard, and the refusal
// names the types that can as the registry it was resolved with has them.
func TestShardRefusalAsksTheRegistry(t *testing.T) {
	const src = "name: t\ntargets: [memory]\nworkloads:\n  - {type: hotkey, load: {duration: 3s}}\n"
	for _, c := range []struct {
		types workload.Registry
		want  string
	}{
		{all.Types(), "hotkey cannot run in shards (--shard): only kv, throughput and mix split their keys"},
		{workload.Registry{hotkey.Type, mix.Type}, "hotkey cannot run in shards (--shard): only mix split their keys"},
	} {
		s, err := Parse("t.yaml", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Defaults()
		s.Shard = workload.Shard{Index: 1, Count: 2}
		if _, err := s.Resolve(registry(), c.types, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.types.Names(), err, c.want)
		}
	}
}
