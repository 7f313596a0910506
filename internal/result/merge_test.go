package result

import (
	"math"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
)

// shardPhase is a phase of ops latencies from lo to lo+ops-1 µs, started
// at start, with one series second per second of ops.
func shardPhase(t *testing.T, start time.Time, ops int64, lo int64, series []int64) metrics.Phase {
	t.Helper()
	h := metrics.NewHistogram()
	for i := range ops {
		if err := h.RecordValue((lo + i) * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	p := metrics.Phase{Name: "mix", Workers: 2, Ops: ops, DurationS: float64(len(series)), Start: start, Histogram: enc,
		LatencyUs: metrics.LatencyOf(h, lo*1000, (lo+ops-1)*1000, float64(lo)+float64(ops-1)/2)}
	for s, n := range series {
		p.Series = append(p.Series, metrics.Second{T: int64(s), Ops: n, Mean: 1})
	}
	return p
}

func shardResult(index int, p metrics.Phase) *Result {
	return &Result{Schema: Schema, ID: "r", Status: StatusComplete, Seed: 1, Scenario: map[string]any{"name": "s"},
		Shard: &Shard{Index: index, Count: 2},
		Cells: []Cell{{ID: "memory/mix", Status: CellOK, Params: map[string]any{"clients": 2.0, "keyspace": 10.0, "shard": map[string]any{"index": index}}, Phases: []metrics.Phase{p}}}}
}

// Merge sums ops and histograms, reads percentiles from the sum, divides by
// the union of the windows, and lines the seconds up by wall clock.
func TestMergeAlignsByWallClock(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	a := shardPhase(t, t0, 300, 1, []int64{100, 100, 100})
	b := shardPhase(t, t0.Add(1500*time.Millisecond), 200, 1001, []int64{100, 100})
	m, warnings, err := Merge(Shards{Results: []*Result{shardResult(1, b), shardResult(0, a)}, Names: []string{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Cells[0].Phases[0]
	if p.Ops != 500 || p.Workers != 4 || m.Cells[0].Params["clients"] != 4.0 || m.Cells[0].Params["shard"] != nil {
		t.Fatalf("merged %d ops of %d workers, params %v", p.Ops, p.Workers, m.Cells[0].Params)
	}
	if p.DurationS != 3.5 || p.ThroughputOpsS != 500/3.5 || !p.Start.Equal(t0) {
		t.Fatalf("merged window %v s from %v, %v ops/s; want 3.5 s from %v", p.DurationS, p.Start, p.ThroughputOpsS, t0)
	}
	// 500 values 1..300 and 1001..1200 µs: the 99th percentile is the 495th, 1195 µs.
	if p.LatencyUs.P99 < 1194 || p.LatencyUs.P99 > 1196 || p.LatencyUs.P50 < 250 || p.LatencyUs.P50 > 251 {
		t.Fatalf("merged p50 %v, p99 %v µs; want the summed histogram's 250 and 1195", p.LatencyUs.P50, p.LatencyUs.P99)
	}
	// b's seconds start at 1.5 s and 2.5 s: merged seconds 1 and 2.
	want := []int64{100, 200, 200}
	if len(p.Series) != len(want) {
		t.Fatalf("series %+v, want ops %v", p.Series, want)
	}
	for i, s := range p.Series {
		if s.T != int64(i) || s.Ops != want[i] {
			t.Fatalf("second %d: %+v, want %d ops", i, s, want[i])
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1.5s apart") || !strings.Contains(m.Notes[0], "merged from 2 shards") {
		t.Fatalf("warnings %q, notes %q: want one saying the starts lie 1.5s apart", warnings, m.Notes)
	}
}

// Windows more than the tolerance apart are not one run's.
func TestMergeRefusesWindowsApart(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	a := shardPhase(t, t0, 10, 1, []int64{10})
	b := shardPhase(t, t0.Add(2100*time.Millisecond), 10, 1, []int64{10})
	_, _, err := Merge(Shards{Results: []*Result{shardResult(0, a), shardResult(1, b)}, Names: []string{"a", "b"}})
	if err == nil || !strings.Contains(err.Error(), "do not overlap") {
		t.Fatalf("err %v, want windows that do not overlap refused", err)
	}
}

// A cluster's ops per node are the nodes' own counters, which count every
// shard's ops in each shard: not summed, said so.
func TestMergeLeavesNodesOut(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	a, b := shardPhase(t, t0, 100, 1, []int64{100}), shardPhase(t, t0, 100, 1, []int64{100})
	a.Nodes = []metrics.NodeOps{{Addr: "127.0.0.1:7000", Role: "primary", Reads: 200, Share: 1}}
	b.Nodes = a.Nodes
	// A replica set's lag is one sampling of the same replicas per shard.
	a.ReplicaLag = &metrics.ReplicaLag{Replicas: 1, Streaming: 1, Samples: 10}
	b.ReplicaLag = a.ReplicaLag
	m, _, err := Merge(Shards{Results: []*Result{shardResult(0, a), shardResult(1, b)}, Names: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Cells[0].Phases[0]
	if p.Nodes != nil || !strings.Contains(strings.Join(p.Notes, "\n"), "ops per node not merged") {
		t.Errorf("merged nodes %+v, notes %q", p.Nodes, p.Notes)
	}
	if p.ReplicaLag != nil || !strings.Contains(strings.Join(p.Notes, "\n"), "replica lag not merged") {
		t.Errorf("merged replica lag %+v, notes %q", p.ReplicaLag, p.Notes)
	}
}

// histogramOf encodes ops latencies of 1..ops µs in a histogram of the
// geometry given.
func histogramOf(t *testing.T, lowest int64, digits int, ops int64) string {
	t.Helper()
	h := hdr.New(lowest, metrics.HighestNs, digits)
	for i := range ops {
		if err := h.RecordValue((i + 1) * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestMergeRefusesFiguresNoRunWrites: a shard is checked before its
// figures are added: counts that are negative or whose sum would
// overflow, a histogram that does not hold the successful calls its ops
// stand for (ops = (histogram's count + errors) × ops per call, as
// metrics.Merge writes it), or of another geometry. Each merged before
// with no error into a "complete" result (negative ops and throughput, or
// a histogram holding half the ops it claimed). The refusal names the
// shard's file, the cell, the phase and the field.
func TestMergeRefusesFiguresNoRunWrites(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		edit func(p *metrics.Phase)
		want string
	}{
		{"ops at the top of int64", func(p *metrics.Phase) { p.Ops = math.MaxInt64 },
			"ops 9223372036854775807 is more than 4611686018427387903: the 2 shards' sum would overflow"},
		{"negative ops", func(p *metrics.Phase) { p.Ops = -100 }, "ops -100 is negative"},
		{"negative errors", func(p *metrics.Phase) { p.Errors = map[string]int64{"timeout": -3} }, "errors.timeout -3 is negative"},
		{"more errors than calls", func(p *metrics.Phase) { p.Errors = map[string]int64{"timeout": 101} }, "errors.timeout 101: more errors than the 100 calls"},
		{"negative workers", func(p *metrics.Phase) { p.Workers = -1 }, "workers -1 is negative"},
		{"negative warm-up", func(p *metrics.Phase) { p.Warmup.Ops = -1 }, "warmup.ops -1 is negative"},
		{"negative series", func(p *metrics.Phase) { p.Series[0].Ops = -5 }, "series second 0 ops -5 is negative"},
		{"a second twice", func(p *metrics.Phase) { p.Series = append(p.Series, p.Series[0]) }, "series second 0 is out of order"},
		{"a duration no run has", func(p *metrics.Phase) { p.DurationS = 1e300 }, "duration_s 1e+300 is out of range"},
		{"an empty histogram", func(p *metrics.Phase) { p.Histogram = "" }, "histogram is empty, but ops 100 less errors 0 are 100 successful calls"},
		{"a histogram of half the ops", func(p *metrics.Phase) { p.Histogram = histogramOf(t, metrics.LowestNs, metrics.Digits, 50) },
			"histogram holds 50 calls, but ops 100 less errors 0 are 100 successful calls"},
		{"another precision", func(p *metrics.Phase) { p.Histogram = histogramOf(t, metrics.LowestNs, 2, 100) },
			"histogram tracks 1 to 60000000000 ns at 2 significant digits, not storebench's 1 to 60000000000 ns at 3"},
		{"another lowest value", func(p *metrics.Phase) { p.Histogram = histogramOf(t, 1000, metrics.Digits, 100) },
			"histogram tracks 1000 to 60000000000 ns at 3 significant digits"},
		{"a latency beyond the histogram", func(p *metrics.Phase) { p.LatencyUs.Max = 1e30 }, "latency_us.max 1e+30 is out of range"},
		{"a server's bytes at the top", func(p *metrics.Phase) { p.Server = &metrics.ServerCost{WriteBytes: math.MaxUint64} }, "server.write_bytes 18446744073709551615 is more than"},
		{"a kind's histogram", func(p *metrics.Phase) {
			p.ByOp = map[string]metrics.OpFigures{"get": {Ops: 100, Histogram: histogramOf(t, metrics.LowestNs, metrics.Digits, 99)}}
		}, "by_op get histogram holds 99 calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := shardPhase(t, t0, 100, 1, []int64{100}), shardPhase(t, t0, 100, 1, []int64{100})
			tc.edit(&b)
			_, _, err := Merge(Shards{Results: []*Result{shardResult(0, a), shardResult(1, b)}, Names: []string{"shards/1.json", "shards/2.json"}})
			want := "shards/2.json: cell memory/mix phase mix: " + tc.want
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err %v, want %q", err, want)
			}
		})
	}
}

// TestMergeTakesWhatRunsWrite: failed calls are in ops but not in the
// histogram, and a pipelined phase counts each call's ops: such a shard
// merges.
func TestMergeTakesWhatRunsWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	a, b := shardPhase(t, t0, 100, 1, []int64{100}), shardPhase(t, t0, 95, 1, []int64{100})
	a.OpsPerCall, a.Ops = 10, 100*10
	b.OpsPerCall, b.Ops, b.Errors = 10, (95+5)*10, map[string]int64{"timeout": 5}
	m, _, err := Merge(Shards{Results: []*Result{shardResult(0, a), shardResult(1, b)}, Names: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Cells[0].Phases[0]; p.Ops != 2000 || p.Errors["timeout"] != 5 {
		t.Fatalf("merged %d ops, %v errors; want 2000 and 5 timeouts", p.Ops, p.Errors)
	}
}

// TestMergeRefusesImpossibleShardCounts: the count a file says sizes
// nothing before it is checked (a count of 0 indexed an empty slice; a
// huge one allocated it).
func TestMergeRefusesImpossibleShardCounts(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	for count, want := range map[int]string{0: "a is not a shard of a run", -2: "a is not a shard of a run", 1 << 62: "shard 1/4611686018427387904 is missing"} {
		r := shardResult(0, shardPhase(t, t0, 10, 1, []int64{10}))
		r.Shard.Count = count
		if _, _, err := Merge(Shards{Results: []*Result{r}, Names: []string{"a"}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("count %d: err %v, want %q", count, err, want)
		}
	}
}
