package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/hiccup"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
)

// synthPhase is a phase of n latencies around 100 µs × scale (log-normal,
// seeded), as one closed-loop client would have measured them.
func synthPhase(t *testing.T, name string, n int, scale float64, seed uint64) metrics.Phase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	h := metrics.NewHistogram()
	var sum float64
	var sq float64
	for range n {
		v := 100e3 * scale * math.Exp(0.4*rng.NormFloat64())
		if err := h.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
		sum += v
		sq += v * v
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	mean := sum / float64(n)
	dur := sum / 1e9
	return metrics.Phase{
		Name: name, Workers: 1, Ops: int64(n), DurationS: dur, ThroughputOpsS: float64(n) / dur,
		LatencyUs: metrics.Latency{
			P50: float64(h.ValueAtQuantile(50)) / 1e3, P90: float64(h.ValueAtQuantile(90)) / 1e3,
			P99: float64(h.ValueAtQuantile(99)) / 1e3, P999: float64(h.ValueAtQuantile(99.9)) / 1e3,
			Max: float64(h.Max()) / 1e3, Mean: mean / 1e3, Stddev: math.Sqrt(sq/float64(n)-mean*mean) / 1e3,
		},
		Histogram: string(enc), HistogramUnit: "ns",
	}
}

func synthRun(id string, cells ...result.Cell) *result.Result {
	return &result.Result{Schema: result.Schema, ID: id, Status: result.StatusComplete, Cells: cells,
		Targets: []result.Target{{Name: "redis", Store: "redis", Info: store.Info{Version: "7.0.15", Settings: map[string]string{"appendfsync": "everysec", "port": "1234"}}}}}
}

func synthCell(id string, phases ...metrics.Phase) result.Cell {
	return result.Cell{ID: id, Target: strings.Split(id, "/")[0], Workload: "kv", Status: result.CellOK, Phases: phases}
}

// verdicts maps "cell phase metric" to the verdict of B against A.
func verdicts(t *testing.T, a, b *result.Result) (map[string]string, Comparison) {
	t.Helper()
	cmps := Compare([]CompareRun{{Name: "A", R: a}, {Name: "B", R: b}})
	if len(cmps) != 1 {
		t.Fatalf("%d comparisons", len(cmps))
	}
	out := map[string]string{}
	for _, r := range cmps[0].Rows {
		out[r.Cell+" "+r.Phase+" "+r.Metric] = r.Verdict
		if r.Base != 0 && r.Ratio != r.Other/r.Base {
			t.Errorf("%s %s %s: ratio %v, want %v/%v", r.Cell, r.Phase, r.Metric, r.Ratio, r.Other, r.Base)
		}
	}
	return out, cmps[0]
}

func TestCompareVerdicts(t *testing.T) {
	const cell = "redis/kv/keys=5000"
	base := synthRun("A", synthCell(cell, synthPhase(t, "read", 5000, 1, 1)))
	cases := []struct {
		name string
		b    *result.Result
		want map[string]string // metric -> verdict; every metric when "*"
	}{
		{"the same run", synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 1, 1))), map[string]string{"*": VerdictSame}},
		{"another sample of the same distribution", synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 1, 2))),
			map[string]string{"ops/s": VerdictSame, "mean µs": VerdictSame, "p50 µs": VerdictSame, "p90 µs": VerdictSame, "p99 µs": VerdictSame, "p99.9 µs": VerdictSame}},
		{"half as fast", synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 2, 2))),
			map[string]string{"ops/s": VerdictWorse, "mean µs": VerdictWorse, "p50 µs": VerdictWorse, "p90 µs": VerdictWorse, "p99 µs": VerdictWorse}},
		{"twice as fast", synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 0.5, 2))),
			map[string]string{"ops/s": VerdictBetter, "mean µs": VerdictBetter, "p50 µs": VerdictBetter, "p90 µs": VerdictBetter, "p99 µs": VerdictBetter}},
		{"3% slower: within the spread", synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 1.03, 2))),
			map[string]string{"p50 µs": VerdictSame, "p99 µs": VerdictSame, "p99.9 µs": VerdictSame}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cmp := verdicts(t, base, c.b)
			if len(got) != len(compareMetrics) {
				t.Fatalf("%d rows, want %d", len(got), len(compareMetrics))
			}
			for _, m := range compareMetrics {
				want, ok := c.want[m.name]
				if !ok {
					want, ok = c.want["*"]
				}
				if ok && got[cell+" read "+m.name] != want {
					row := cmp.Rows[0]
					for _, r := range cmp.Rows {
						if r.Metric == m.name {
							row = r
						}
					}
					t.Errorf("%s: %s, want %s (A %v [%v, %v], B %v [%v, %v])", m.name, got[cell+" read "+m.name], want,
						row.Base, row.BaseLo, row.BaseHi, row.Other, row.OtherLo, row.OtherHi)
				}
			}
		})
	}
}

// TestCompareRepeats: a cell repeated in a run spreads over its repeats, so
// a difference a single run would call clear is not one against repeats
// that vary as much.
func TestCompareRepeats(t *testing.T) {
	const cell = "redis/kv/keys=5000"
	b := synthRun("B", synthCell(cell, synthPhase(t, "read", 5000, 1.15, 9)))
	single := synthRun("A", synthCell(cell, synthPhase(t, "read", 5000, 1, 1)))
	repeated := synthRun("A", synthCell(cell, synthPhase(t, "read", 5000, 1, 1)), synthCell(cell, synthPhase(t, "read", 5000, 1.3, 3)))
	got, _ := verdicts(t, single, b)
	if got[cell+" read p50 µs"] != VerdictWorse {
		t.Errorf("single A: p50 %s, want %s", got[cell+" read p50 µs"], VerdictWorse)
	}
	got, cmp := verdicts(t, repeated, b)
	if got[cell+" read p50 µs"] != VerdictSame {
		t.Errorf("repeated A: p50 %s, want %s", got[cell+" read p50 µs"], VerdictSame)
	}
	for _, r := range cmp.Rows {
		if r.Metric == "p50 µs" {
			p1, p2 := repeated.Cells[0].Phases[0].LatencyUs.P50, repeated.Cells[1].Phases[0].LatencyUs.P50
			if r.Base != (p1+p2)/2 || r.BaseLo != math.Min(p1, p2) || r.BaseHi != math.Max(p1, p2) {
				t.Errorf("repeats: A %v [%v, %v], want the median of %v and %v and their range", r.Base, r.BaseLo, r.BaseHi, p1, p2)
			}
		}
	}
}

// TestCompareUnknownSpread: without a histogram there is no interval, and
// the verdict says so instead of guessing.
func TestCompareUnknownSpread(t *testing.T) {
	const cell = "redis/kv/keys=5000"
	pa, pb := synthPhase(t, "read", 5000, 1, 1), synthPhase(t, "read", 5000, 1.5, 2)
	pa.Histogram, pb.Histogram = "", ""
	got, _ := verdicts(t, synthRun("A", synthCell(cell, pa)), synthRun("B", synthCell(cell, pb)))
	if v := got[cell+" read p50 µs"]; v != VerdictUnknown {
		t.Errorf("p50 without histograms: %s", v)
	}
	if v := got[cell+" read mean µs"]; v != VerdictWorse {
		t.Errorf("mean needs no histogram: %s", v)
	}
}

// TestCompareText: matched, unmatched and failed cells, the setup that
// differs, and the numbers printed are the runs'.
func TestCompareText(t *testing.T) {
	a := synthRun("A",
		synthCell("redis/kv/keys=5000", synthPhase(t, "write", 5000, 1, 1), synthPhase(t, "read", 5000, 1, 2)),
		synthCell("memory/kv/keys=5000", synthPhase(t, "write", 5000, 0.01, 3)),
		synthCell("files/kv/keys=5000", synthPhase(t, "write", 5000, 5, 4)))
	b := synthRun("B",
		synthCell("redis/kv/keys=5000", synthPhase(t, "write", 5000, 3, 5), synthPhase(t, "read", 5000, 1, 2)),
		synthCell("sqlite/kv/keys=5000", synthPhase(t, "write", 5000, 2, 6)),
		result.Cell{ID: "files/kv/keys=5000", Target: "files", Workload: "kv", Status: result.CellFailed, Error: "disk full"})
	b.Targets[0].Version = "7.2.4"
	b.Targets[0].Settings = map[string]string{"appendfsync": "always", "port": "4321"}
	runs := []CompareRun{{Name: "A", Path: "a/result.json", R: a}, {Name: "B", Path: "b/result.json", R: b}}
	var out bytes.Buffer
	CompareText(&out, runs, Compare(runs))
	s := out.String()
	wp := a.Cells[0].Phases[0].ThroughputOpsS
	bp := b.Cells[0].Phases[0].ThroughputOpsS
	for _, want := range []string{
		"redis/kv/keys=5000 · write", "redis/kv/keys=5000 · read",
		num(wp), num(bp), ratioText(bp / wp), VerdictWorse, VerdictSame,
		"only in A: memory/kv/keys=5000", "only in B: sqlite/kv/keys=5000", "not compared (failed in A or B): files/kv/keys=5000",
		"redis version: 7.0.15 → 7.2.4", "redis appendfsync: everysec → always",
		"B vs A: 12 figures of 1 matched cells",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("compare output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "port") {
		t.Errorf("a managed server's port is not a difference:\n%s", s)
	}
	var md bytes.Buffer
	CompareMarkdown(&md, runs, Compare(runs))
	if !strings.Contains(md.String(), "| redis/kv/keys=5000 | write | ops/s | "+num(wp)+" | "+num(bp)+" | "+ratioText(bp/wp)+" | **worse** |") {
		t.Errorf("markdown compare lacks the write ops/s row:\n%s", md.String())
	}
}

// TestCompareParamDiffs: cells are matched by id, which leaves the load out;
// a changed --clients or --stall must be printed, once per change.
func TestCompareParamDiffs(t *testing.T) {
	cell := func(id string, params map[string]any, seed uint64) result.Cell {
		ph := synthPhase(t, "get", 2000, 1, seed)
		// 1 connection blocks on its socket, 50 use the poller (blockio.Use).
		ph.ClientIO = map[bool]string{true: "blocking", false: "poller"}[params["clients"] == float64(1)]
		c := synthCell(id, ph)
		c.Params = params
		return c
	}
	a := synthRun("A",
		cell("redis/throughput", map[string]any{"clients": float64(1), "keyspace": float64(1000)}, 1),
		cell("postgres/throughput", map[string]any{"clients": float64(1), "keyspace": float64(1000)}, 2))
	b := synthRun("B",
		cell("redis/throughput", map[string]any{"clients": float64(50), "keyspace": float64(1000), "stall_for": "500ms"}, 3),
		cell("postgres/throughput", map[string]any{"clients": float64(50), "keyspace": float64(1000)}, 4))
	_, cmp := verdicts(t, a, b)
	want := []string{
		"clients: 1 → 50 (all 2 matched cells)",
		"stall_for: (none) → 500ms (redis/throughput)",
		"client I/O (get): blocking → poller (all 2 matched cells)",
	}
	if strings.Join(cmp.ParamDiffs, "\n") != strings.Join(want, "\n") {
		t.Errorf("parameter differences:\n%s\nwant:\n%s", strings.Join(cmp.ParamDiffs, "\n"), strings.Join(want, "\n"))
	}
	runs := []CompareRun{{Name: "A", R: a}, {Name: "B", R: b}}
	var out, md bytes.Buffer
	CompareText(&out, runs, Compare(runs))
	CompareMarkdown(&md, runs, Compare(runs))
	for _, s := range []string{out.String(), md.String()} {
		if !strings.Contains(s, "parameter differs: clients: 1 → 50") {
			t.Errorf("compare output lacks the parameter difference:\n%s", s)
		}
	}
}

// TestCompareByOp: the kinds of a mixed phase are compared on their own, so
// sets three times slower show although the mix's gets did not change.
func TestCompareByOp(t *testing.T) {
	kinds := func(get, set metrics.Phase) metrics.Phase {
		p := synthPhase(t, "mix", 4000, 1, 9)
		p.ByOp = map[string]metrics.OpFigures{}
		for k, ph := range map[string]metrics.Phase{"get": get, "set": set} {
			p.ByOp[k] = metrics.OpFigures{Ops: ph.Ops, ThroughputOpsS: ph.ThroughputOpsS, LatencyUs: ph.LatencyUs, Histogram: ph.Histogram}
		}
		return p
	}
	a := synthRun("A", synthCell("redis/mix/key_dist=zipfian/read_ratio=0.9",
		kinds(synthPhase(t, "get", 3600, 1, 1), synthPhase(t, "set", 400, 1, 2))))
	b := synthRun("B", synthCell("redis/mix/key_dist=zipfian/read_ratio=0.9",
		kinds(synthPhase(t, "get", 3600, 1, 3), synthPhase(t, "set", 400, 3, 4))))
	v, _ := verdicts(t, a, b)
	id := "redis/mix/key_dist=zipfian/read_ratio=0.9"
	for key, want := range map[string]string{
		id + " mix set p50 µs": VerdictWorse, id + " mix set mean µs": VerdictWorse,
		id + " mix get p50 µs": VerdictSame, id + " mix p50 µs": VerdictSame,
	} {
		if v[key] != want {
			t.Errorf("%s: %q, want %q", key, v[key], want)
		}
	}
}

// A capacity cell is compared by its capacity at each SLO (issue 31), with
// the search's bracket (or the repeats' range) as its interval, and its
// search steps are not compared one by one: their rates are the search's
// choice in each run.
func TestCompareCapacity(t *testing.T) {
	r, err := result.Read("testdata/capacity-result.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	cmps := Compare([]CompareRun{{Name: "A", R: r}, {Name: "B", R: r}})
	var capRows int
	for _, row := range cmps[0].Rows {
		if strings.Contains(row.Phase, "step") {
			t.Errorf("a search step compared: %+v", row)
		}
		if row.Metric == "capacity ops/s" {
			capRows++
			if row.Verdict != VerdictSame || row.BaseLo > row.Base || row.BaseHi < row.Base {
				t.Errorf("capacity row %+v", row)
			}
		}
	}
	if capRows == 0 {
		t.Error("no capacity row")
	}
}

// The exact bootstrap interval of the median: the whole range for a few
// repeats, narrower than it for many (the median's own uncertainty).
func TestBootstrapMedian(t *testing.T) {
	three := []float64{1, 2, 3}
	if lo, hi := bootstrapMedian(three); lo != 1 || hi != 3 {
		t.Errorf("3 repeats: %v–%v, want the range 1–3", lo, hi)
	}
	var many []float64
	for i := 1; i <= 41; i++ {
		many = append(many, float64(i))
	}
	lo, hi := bootstrapMedian(many)
	if !(lo > 1 && lo < 21 && hi < 41 && hi > 21) {
		t.Errorf("41 repeats: %v–%v, want within the range around the median 21", lo, hi)
	}
	// Symmetric data, a symmetric interval.
	if 21-lo != hi-21 {
		t.Errorf("41 repeats: %v–%v is not symmetric about 21", lo, hi)
	}
}

// TestCompareMachineSpeed: a run whose every figure is 2× worse fails a
// p50 rule, unless its CPUs also ran the hiccup probes' speed loop about
// 2× slower: then the change is the machine's, said and not judged; and a
// change well beyond the machine's slowdown still fails, with it said.
func TestCompareMachineSpeed(t *testing.T) {
	const cell = "redis/kv/keys=5000"
	withSpeed := func(p metrics.Phase, ns float64) metrics.Phase {
		p.Hiccup = &hiccup.Window{Seconds: p.DurationS, All: hiccup.Figures{CPU: -1, Wakes: 1000, SpeedNs: ns}}
		return p
	}
	rule, err := ParseFailRule("p50>+50%")
	if err != nil {
		t.Fatal(err)
	}
	judge := func(scale, speedA, speedB float64) (RuleVerdict, Comparison) {
		a := synthRun("A", synthCell(cell, withSpeed(synthPhase(t, "read", 5000, 1, 1), speedA)))
		b := synthRun("B", synthCell(cell, withSpeed(synthPhase(t, "read", 5000, scale, 2), speedB)))
		cmps := Compare([]CompareRun{{Name: "A", R: a}, {Name: "B", R: b}})
		for _, v := range cmps[0].Judge([]FailRule{rule}) {
			if v.Phase == "read" {
				return v, cmps[0]
			}
		}
		t.Fatal("no verdict for the read phase")
		return RuleVerdict{}, Comparison{}
	}
	if v, c := judge(2, 400, 400); !v.Fail || len(c.SetupDiffs) != 0 {
		t.Errorf("2× worse at the same CPU speed: %+v, set-up diffs %q; want a failure and no speed diff", v, c.SetupDiffs)
	}
	v, c := judge(2, 400, 780)
	if v.Fail || v.Judged || !strings.Contains(v.Why, "B's CPUs ran 1.95× slower") {
		t.Errorf("2× worse on CPUs 1.95× slower: %+v; want not judged, the slowdown said", v)
	}
	if len(c.SetupDiffs) != 1 || !strings.Contains(c.SetupDiffs[0], "400 ns in A, 780 ns in B") {
		t.Errorf("set-up diffs %q: want the CPU speed of each run", c.SetupDiffs)
	}
	if v, _ := judge(4, 400, 600); !v.Fail || !strings.Contains(v.Why, "1.50× the baseline's time") {
		t.Errorf("4× worse on CPUs 1.5× slower: %+v; want a failure that says the slowdown", v)
	}
	// A faster machine explains no worsening.
	if v, _ := judge(2, 800, 400); !v.Fail {
		t.Errorf("2× worse on faster CPUs: %+v; want a failure", v)
	}
}
