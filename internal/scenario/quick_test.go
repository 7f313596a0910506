package scenario

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/suites"
)

// quickBudget is what one suite's --quick may plan: measured seconds
// (warm-ups and timed phases) and operations (counted phases and their
// warm-ups, keys written and read), over every cell and repeat. The nine
// suites of round 1 one after another must take under 5 minutes on the
// 2-CPU VM (issue 21); these budgets are that plan, with a little room.
// Raising one is a decision: measure `storebench run SUITE --quick` first.
var quickBudget = map[string]struct {
	seconds float64
	ops     int64
}{
	"quick":                {0, 90_000},
	"cache-vs-db":          {0, 320_000},
	"files-vs-cache":       {0, 40_000},
	"redis-persistence":    {0, 240_000},
	"sessions":             {50, 13_000},
	"payments":             {35, 0},
	"durability":           {30, 15_000},
	"network":              {45, 6_000},
	"coordinated-omission": {15, 0},
}

// TestQuickBudget: each suite's quick plan stays within its budget, and
// says what --quick changed.
func TestQuickBudget(t *testing.T) {
	for name, budget := range quickBudget {
		t.Run(name, func(t *testing.T) {
			r := resolveQuick(t, name)
			seconds, ops := plannedCost(t, r)
			t.Logf("%s --quick plans %d cells, %.1f s timed, %d ops; changes: %s", name, len(r.Cells), seconds, ops, strings.Join(r.QuickChanges, "; "))
			if seconds > budget.seconds || ops > budget.ops {
				t.Errorf("%s --quick plans %.1f s and %d ops; its budget is %.0f s and %d ops", name, seconds, ops, budget.seconds, budget.ops)
			}
			if len(r.QuickChanges) == 0 {
				t.Errorf("%s --quick: no note of what it changed", name)
			}
		})
	}
}

func resolveQuick(t *testing.T, name string) *Resolved {
	t.Helper()
	b, ok := suites.Open(name)
	if !ok {
		t.Fatalf("no suite %s", name)
	}
	return resolveQuickSource(t, name, string(b))
}

// resolveQuickSource is a scenario file's quick run, resolved as a run
// resolves it.
func resolveQuickSource(t *testing.T, name, src string) *Resolved {
	t.Helper()
	s, err := Parse(name, strings.NewReader(src))
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
	return r
}

// plannedCost sums, over the cells and repeats, the timed seconds and the
// operations each cell's recorded parameters ask for.
func plannedCost(t *testing.T, r *Resolved) (seconds float64, ops int64) {
	t.Helper()
	for _, c := range r.Cells {
		b, err := json.Marshal(c.Params)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if l, ok := p["load"].(map[string]any); ok { // hotkey, web, throughput
			p = l
		}
		s, n := cellCost(t, p)
		repeat := float64(max(r.Scenario.Repeat, 1))
		seconds += s * repeat
		ops += n * int64(repeat)
	}
	return seconds, ops
}

func cellCost(t *testing.T, p map[string]any) (seconds float64, ops int64) {
	t.Helper()
	dur := func(k string) float64 {
		v, _ := p[k].(string)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s %q: %v", k, v, err)
		}
		return d.Seconds()
	}
	num := func(k string) int64 { f, _ := p[k].(float64); return int64(f) }
	phases := int64(1)
	if o, ok := p["operations"].([]any); ok {
		phases = int64(len(o)) // throughput: one phase per operation
	}
	trials := max(num("trials"), 1)
	seconds = dur("duration") + dur("warmup") + float64(trials)*dur("kill_window")
	if p["phase"] == "churn" && p["warmup"] == nil { // sessions phase B: its warm-up is TTL + active mean
		seconds += dur("ttl") + dur("active_mean")
	}
	ops = phases*(num("ops")+num("warmup_ops")) + 2*num("keys") + num("inserts") + trials*num("min_acked")
	return seconds, ops
}

// TestQuickChanges: the note of what --quick changed names each change
// once, with its entries when not every entry's, and the cells it drops.
func TestQuickChanges(t *testing.T) {
	src := `name: t
targets: [memory, redis]
repeat: 3
workloads:
  - {type: kv, keys: [100, 1000]}
  - {type: throughput, name: tp, load: {ops: 5000}}
  - {type: throughput, name: timed, load: {duration: 1m, warmup: 10s}}
quick:
  keys: [100]
  ops: 500
  duration: 2s
  warmup: 1s
  repeat: 1
`
	r := resolveQuickSource(t, "t.yaml", src)
	want := []string{"repeat 3→1", "keys [100 1000]→[100] (kv)", "ops 5000→500 (tp)", "duration 1m0s→2s (timed)", "warmup 10s→1s (timed)", "6 of 8 cells"}
	if strings.Join(r.QuickChanges, "; ") != strings.Join(want, "; ") {
		t.Errorf("quick changes:\n got %q\nwant %q", r.QuickChanges, want)
	}
	// Without --quick there is nothing to say.
	s, _ := Parse("t.yaml", strings.NewReader(src))
	if r, err := s.Resolve(registry(), all.Types(), false); err != nil || r.QuickChanges != nil {
		t.Errorf("without --quick: changes %q, err %v", r.QuickChanges, err)
	}
}

// TestQuickChangesLeaveFlagsOut: what the command line set after --quick
// (here a duration and a keys overlay, as --duration and --keys do) is the
// user's, not a change --quick made; only the quick section's ops remain.
func TestQuickChangesLeaveFlagsOut(t *testing.T) {
	src := `name: t
targets: [memory]
workloads:
  - {type: kv, keys: [100, 1000]}
  - {type: throughput, name: tp, load: {ops: 5000}}
quick:
  ops: 500
`
	s, err := Parse("t.yaml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyQuick(all.Types()); err != nil {
		t.Fatal(err)
	}
	err = s.ApplyFlags(func(s *Scenario) error {
		s.Workloads[1].Load = &Load{Duration: Duration(3 * time.Second)}
		return s.Override("--keys", map[string]any{"keys": []int64{10}})
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(registry(), all.Types(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.QuickChanges) != 0 {
		t.Errorf("flags counted as quick changes: %q", r.QuickChanges)
	}
}
