package assert

import (
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/result/payments"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		expr   string
		metric string
		scope  string
		op     string
		value  float64
	}{
		{"p99<=2ms", "p99", "", "<=", 2000},
		{"p50<500us", "p50", "", "<", 500},
		{"p99.9 <= 1.5ms", "p99.9", "", "<=", 1500},
		{"p95<=300µs", "p95", "", "<=", 300},
		{"ops_s>=50k", "ops_s", "", ">=", 50000},
		{"errors==0", "errors", "", "==", 0},
		{"error_rate<0.1%", "error_rate", "", "<", 0.001},
		{"hit_ratio>=0.8", "hit_ratio", "", ">=", 0.8},
		{"lost==0", "lost", "", "==", 0},
		{"invariants==ok", "invariants", "", "==", 1},
		{"capacity>=20k", "capacity", "", ">=", 20000},
		{"redis:get:p99<=1ms", "p99", "redis get", "<=", 1000},
		{"postgres*:*:p99<=5ms", "p99", "postgres* *", "<=", 5000},
		{"redis:aof-always:kv:read:max<1s", "max", "redis aof-always kv read", "<", 1e6},
	} {
		a, err := Parse(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if a.Metric != c.metric || strings.Join(a.Scope, " ") != c.scope || a.Op != c.op || a.Value != c.value {
			t.Errorf("%q: %+v; want metric %s scope %q op %s value %v", c.expr, a, c.metric, c.scope, c.op, c.value)
		}
	}
	for expr, want := range map[string]string{
		"p99<=bogus":      "not a latency",
		"p99<=2":          "not a latency",
		"p100<=1ms":       "unknown metric",
		"latency<=1ms":    "unknown metric",
		"ops_s>=fast":     "not a number",
		"error_rate<150%": "not a share",
		"invariants>ok":   "use == or !=",
		"invariants==yes": "judged against ok",
		"p99":             "want [target",
		"::p99<=1ms":      "empty scope",
		"[:p99<=1ms":      "not a glob",
		"p99<=":           "no value",
	} {
		if _, err := Parse(expr); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "assert ") {
			t.Errorf("%q: %v; want an error saying %q", expr, err, want)
		}
	}
	if _, err := ParseAll(make([]string, Max+1)); err == nil {
		t.Error("more than Max assertions parsed")
	}
	if _, err := Parse(strings.Repeat("p", MaxLen+1)); err == nil {
		t.Error("an expression over MaxLen parsed")
	}
}

// histogram encodes n latencies of 1..n µs.
func histogram(t *testing.T, n int) string {
	h := hdr.New(metrics.LowestNs, metrics.HighestNs, metrics.Digits)
	for i := 1; i <= n; i++ {
		if err := h.RecordValue(int64(i) * 1000); err != nil {
			t.Fatal(err)
		}
	}
	s, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJudge(t *testing.T) {
	c := &result.Cell{ID: "redis:aof-always/mix", Target: "redis:aof-always", Workload: "mix", Phases: []metrics.Phase{
		{Name: "run", Ops: 1000, Errors: map[string]int64{"timeout": 10}, ThroughputOpsS: 5000,
			LatencyUs: metrics.Latency{P50: 500, P99: 990, Max: 1000}, Histogram: histogram(t, 990),
			ByOp: map[string]metrics.OpFigures{"get": {Ops: 900, LatencyUs: metrics.Latency{P99: 800}}, "set": {Ops: 100, LatencyUs: metrics.Latency{P99: 2000}}}},
	}}
	for _, tc := range []struct {
		expr   string
		phases []string // the verdicts' phases, in order
		pass   []bool
	}{
		{"p99<=1ms", []string{"run"}, []bool{true}},
		{"p95<=900us", []string{"run"}, []bool{false}}, // from the histogram: 1..990 µs, p95 ≈ 941
		{"error_rate<=1%", []string{"run"}, []bool{true}},
		{"errors==0", []string{"run"}, []bool{false}},
		{"ops_s>=5k", []string{"run"}, []bool{true}},
		{"redis:aof-always:p99<=1ms", []string{"run"}, []bool{true}}, // a label holding ':'
		{"redis:mix:run:p99<=1ms", []string{"run"}, []bool{true}},    // the store kind, then workload and phase
		{"redis*:set:p99<=1ms", []string{"run set"}, []bool{false}},  // an op kind of the phase
		{"*:mix:get:p99<=1ms", []string{"run get"}, []bool{true}},
		{"postgres:p99<=1ms", nil, nil}, // another target
		{"redis:kv:p99<=1ms", nil, nil}, // another workload
		{"lost==0", nil, nil},           // no durability summary
		{"redis:mix:run:x:p99<=1ms", nil, nil},
	} {
		a, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs := a.Judge(c, "redis")
		var phases []string
		var pass []bool
		for _, v := range vs {
			phases, pass = append(phases, v.Phase), append(pass, v.Pass)
			if v.Cell != c.ID || v.Target != c.Target || v.Expr != tc.expr {
				t.Errorf("%s: verdict %+v names another cell or expression", tc.expr, v)
			}
		}
		if strings.Join(phases, ",") != strings.Join(tc.phases, ",") || len(pass) != len(tc.pass) {
			t.Errorf("%s: phases %q, want %q", tc.expr, phases, tc.phases)
			continue
		}
		for i := range pass {
			if pass[i] != tc.pass[i] {
				t.Errorf("%s: %s pass %v (measured %v), want %v", tc.expr, phases[i], pass[i], vs[i].Measured, tc.pass[i])
			}
		}
	}
	if !(Assertion{Scope: []string{"postgres"}}).MatchesTarget("postgres:async-commit", "postgres") ||
		(Assertion{Scope: []string{"mariadb"}}).MatchesTarget("postgres", "postgres") {
		t.Error("MatchesTarget")
	}
}

// A capacity none was found at counts as 0 (capacity>0 fails, with the
// lowest rate tried said); the search's steps are not judged as phases;
// payments' invariants are ok or not.
func TestJudgeSummaries(t *testing.T) {
	c := &result.Cell{ID: "memory/capacity", Target: "memory", Workload: "capacity",
		Phases: []metrics.Phase{{Name: "slo1 step1", Ops: 10, LatencyUs: metrics.Latency{P99: 5}}},
		Capacity: &capacity.Summary{SLOs: []capacity.SLO{{Text: "p99<=1µs"}, {Text: "p99<=10ms"}},
			Steps:    []capacity.Step{{Phases: []string{"slo1 step1"}}},
			Capacity: []capacity.Capacity{{SLO: 0, LowestTriedOpsS: 16, Confirm: -1}, {SLO: 1, Found: true, OpsS: 30000, Confirm: 0}}}}
	a, _ := Parse("capacity>0")
	vs := a.Judge(c, "memory")
	if len(vs) != 2 || vs[0].Pass || vs[0].Measured != 0 || !strings.Contains(vs[0].Note, "none (lowest tried 16") || vs[0].Phase != "p99<=1µs" || !vs[1].Pass {
		t.Errorf("capacity verdicts %+v", vs)
	}
	if !strings.Contains(Line(vs[0]), "capacity>0: memory/capacity p99<=1µs: measured 0 ops/s, none") {
		t.Errorf("line %q", Line(vs[0]))
	}
	p99, _ := Parse("p99<=1s")
	if vs := p99.Judge(c, "memory"); len(vs) != 0 {
		t.Errorf("a search step judged as a phase: %+v", vs)
	}
	inv, _ := Parse("invariants==ok")
	pc := &result.Cell{ID: "postgres/payments", Target: "postgres", Workload: "payments", Payments: &payments.Summary{Invariants: payments.Invariants{OK: false}}}
	if vs := inv.Judge(pc, "postgres"); len(vs) != 1 || vs[0].Pass || Measured(vs[0]) != "violated" {
		t.Errorf("invariants verdicts %+v", vs)
	}
	if v := a.Unmatched(); v.Pass || v.Note != NoMatch || !strings.Contains(Line(v), NoMatch) {
		t.Errorf("unmatched %+v", v)
	}
}
