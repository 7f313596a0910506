package result

import (
	"strings"
	"testing"
	"time"

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
