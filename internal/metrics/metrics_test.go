package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder(NewCollector(nil))
	r.Start(t0)
	now := t0
	if n := testing.AllocsPerRun(10000, func() {
		now = now.Add(time.Microsecond) // crosses a second every 1e6 runs: not here
		r.Tick(now)
		r.Record(137 * time.Microsecond)
	}); n != 0 {
		t.Fatalf("Tick+Record: %v allocs per run, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { r.Record(2 * time.Minute) }); n != 0 {
		t.Fatalf("Record of a clamped value: %v allocs per run, want 0", n)
	}
}

func TestRecordErrorAddsNoAllocation(t *testing.T) {
	r := NewRecorder(NewCollector(nil))
	r.Start(t0)
	err := errclass.WithClass(errclass.ClassConflict, errors.New("serialization failure"))
	for range maxSamples { // past the kept messages
		r.RecordError(err, time.Millisecond)
	}
	var sink errclass.Class
	classify := testing.AllocsPerRun(1000, func() { sink = errclass.Classify(err) })
	_ = sink
	got := testing.AllocsPerRun(1000, func() { r.RecordError(err, time.Millisecond) })
	if got != classify {
		t.Fatalf("RecordError: %v allocs per run, errclass.Classify alone: %v; want no more", got, classify)
	}
	if classify != 0 {
		t.Logf("errclass.Classify allocates %v per call (errors.As with a pointer target); errors.AsType would not", classify)
	}
}

func TestMergeAddsHistogramsAndCounts(t *testing.T) {
	col := NewCollector(nil)
	a, b := NewRecorder(col), NewRecorder(col)
	a.Start(t0)
	b.Start(t0)
	for i := range 1000 {
		a.Tick(at(time.Duration(i) * time.Millisecond))
		a.Record(time.Duration(100+i) * time.Microsecond)
	}
	for i := range 500 {
		b.Tick(at(time.Duration(i) * time.Millisecond))
		b.Record(10 * time.Millisecond)
	}
	b.RecordError(errclass.WithClass(errclass.ClassTimeout, errors.New("deadline")), time.Second)
	b.RecordError(errors.New("boom"), time.Second)
	b.RecordError(errors.New("boom"), time.Second)

	p := Merge([]*Recorder{a, b}, Meta{Name: "read", Duration: 2 * time.Second, WarmupOps: 7, ClientCPU: 3 * time.Millisecond})
	if p.Ops != 1503 || p.Workers != 2 {
		t.Fatalf("ops=%d workers=%d, want 1503 and 2", p.Ops, p.Workers)
	}
	if p.Errors["timeout"] != 1 || p.Errors["other"] != 2 || len(p.Errors) != 2 {
		t.Fatalf("errors=%v", p.Errors)
	}
	if want := []string{"timeout: deadline", "other: boom"}; fmt.Sprint(p.ErrorSamples) != fmt.Sprint(want) {
		t.Fatalf("samples=%q, want %q (deduplicated)", p.ErrorSamples, want)
	}
	h, err := p.DecodeHistogram()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 1500 {
		t.Fatalf("histogram count=%d, want 1500 (successes of both workers)", h.TotalCount())
	}
	if h.SignificantFigures() != Digits || h.HighestTrackableValue() < HighestNs {
		t.Fatalf("decoded geometry: %d digits, highest %d", h.SignificantFigures(), h.HighestTrackableValue())
	}
	// 1/3 of the successes are 10 ms: p50 is worker a's, p90 is worker b's.
	if p.LatencyUs.P50 < 700 || p.LatencyUs.P50 > 1200 || p.LatencyUs.P90 < 9990 || p.LatencyUs.P90 > 10020 {
		t.Fatalf("latency=%+v", p.LatencyUs)
	}
	if p.LatencyUs.Max != 10000 || p.LatencyUs.Min != 100 {
		t.Fatalf("exact min/max: %+v", p.LatencyUs)
	}
	wantMean := (float64(1000*100+999*1000/2) + 500*10000) / 1500
	if d := p.LatencyUs.Mean - wantMean; d > 0.01 || d < -0.01 {
		t.Fatalf("mean=%v want %v", p.LatencyUs.Mean, wantMean)
	}
	if p.ThroughputOpsS != 751.5 || p.ClientCPUUsPerOp != 3000.0/1503 || p.Warmup.Ops != 7 {
		t.Fatalf("throughput=%v cpu/op=%v warmup=%+v", p.ThroughputOpsS, p.ClientCPUUsPerOp, p.Warmup)
	}
	var sum, errs int64
	for _, s := range p.Series {
		sum += s.Ops
		errs += s.Errors
	}
	if sum != p.Ops || errs != 3 || len(p.Series) != 2 {
		t.Fatalf("series %+v: ops %d errors %d, want %d and 3 over 2 seconds", p.Series, sum, errs, p.Ops)
	}
	if s := p.Series[0]; s.Ops != 1503 || s.Max != 10000 || s.P99 < 9900 || s.P99 > 10100 {
		t.Fatalf("second 0: %+v", s)
	}
}

func TestSeriesSeconds(t *testing.T) {
	var mu sync.Mutex
	var got []Second
	col := NewCollector(func(s Second) { mu.Lock(); got = append(got, s); mu.Unlock() })
	a, b := NewRecorder(col), NewRecorder(col)
	a.Start(t0)
	b.Start(t0)
	// a: 10 ops in each of seconds 0..3; b: 5 ops in second 0, then a 3 s
	// gap, then 5 ops in second 3.
	for s := range 4 {
		for i := range 10 {
			a.Tick(at(time.Duration(s)*time.Second + time.Duration(i)*time.Millisecond))
			a.Record(time.Millisecond)
		}
	}
	for i := range 5 {
		b.Tick(at(time.Duration(i) * time.Millisecond))
		b.Record(2 * time.Millisecond)
	}
	b.Tick(at(3*time.Second + 500*time.Millisecond))
	for range 5 {
		b.Record(4 * time.Millisecond)
	}
	p := Merge([]*Recorder{a, b}, Meta{Duration: 3500 * time.Millisecond})
	want := []Second{
		{T: 0, Ops: 15, P50: 1, P99: 2, Max: 2000, Mean: (10*1000 + 5*2000) / 15.0},
		{T: 1, Ops: 10, Max: 1000, Mean: 1000},
		{T: 2, Ops: 10, Max: 1000, Mean: 1000},
		{T: 3, Ops: 15, Max: 4000, Mean: (10*1000 + 5*4000) / 15.0},
	}
	if len(p.Series) != len(want) {
		t.Fatalf("series %+v", p.Series)
	}
	for i, s := range p.Series {
		w := want[i]
		if s.T != w.T || s.Ops != w.Ops || s.Max != w.Max || s.Mean != w.Mean || s.P50 == 0 || s.P50 > s.P99 || s.P99 > s.Max*1.01 {
			t.Errorf("second %d = %+v, want %+v", i, s, w)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(p.Series) {
		t.Fatalf("OnSecond got %+v, series %+v", got, p.Series)
	}
}

// A worker stuck in one operation must not hold the series back for ever:
// seconds complete after maxLag, and its late data is still counted.
func TestSeriesDoesNotWaitForAStuckWorker(t *testing.T) {
	seen := make(chan Second, 100)
	col := NewCollector(func(s Second) { seen <- s })
	stuck, live := NewRecorder(col), NewRecorder(col)
	stuck.Start(t0)
	live.Start(t0)
	stuck.Tick(at(100 * time.Millisecond))
	stuck.Record(time.Millisecond) // then stuck: nothing handed off
	for s := range 12 {
		live.Tick(at(time.Duration(s) * time.Second))
		live.Record(time.Millisecond)
	}
	deadline := time.After(5 * time.Second)
	for want := int64(0); want < 12-maxLag-1; want++ {
		select {
		case s := <-seen:
			if s.T != want || (s.T == 0 && s.Ops != 1) {
				t.Fatalf("got second %+v, want t=%d (second 0 without the stuck worker's op)", s, want)
			}
		case <-deadline:
			t.Fatalf("second %d not completed while a worker is stuck", want)
		}
	}
	stuck.Tick(at(11 * time.Second)) // back, hands in second 0 late
	p := Merge([]*Recorder{stuck, live}, Meta{Duration: 12 * time.Second})
	if p.Series[0].Ops != 2 {
		t.Fatalf("late data not added to second 0: %+v", p.Series[0])
	}
	if len(col.pending) != 0 || len(col.free) > maxLag+2 {
		t.Fatalf("collector holds %d pending and %d free histograms", len(col.pending), len(col.free))
	}
}

func TestPhaseJSON(t *testing.T) {
	r := NewRecorder(nil)
	r.Record(time.Millisecond)
	r.RecordError(fmt.Errorf("get: %w", context.DeadlineExceeded), 0)
	p := Merge([]*Recorder{r}, Meta{Name: "w", Duration: time.Second})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"name":"w"`, `"ops":2`, `"errors":{"timeout":1}`, `"error_samples":["timeout: get: context deadline exceeded"]`,
		`"duration_s":1`, `"throughput_ops_s":2`, `"latency_us":{"p50":1000,`, `"p999":`, `"stddev":`, `"histogram":"`,
		`"histogram_unit":"ns"`, `"warmup":{"duration_s":0,"ops":0}`, `"client_cpu_s":0`, `"client_cpu_us_per_op":0`, `"workers":1`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s: %s", k, b)
		}
	}
	var back Phase
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if h, err := back.DecodeHistogram(); err != nil || h.TotalCount() != 1 {
		t.Fatalf("decode after JSON round trip: %v, %v", h, err)
	}
}

// Percentiles never exceed the exact max nor fall below the exact min, even
// though a histogram bucket's highest equivalent value may.
func TestPercentilesStayWithinMinAndMax(t *testing.T) {
	r := NewRecorder(nil)
	r.Start(time.Now())
	for _, d := range []time.Duration{1500 * time.Nanosecond, 53521 * time.Nanosecond} {
		r.Record(d)
	}
	p := Merge([]*Recorder{r}, Meta{Name: "x", Duration: time.Second})
	l := p.LatencyUs
	for name, v := range map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p99.9": l.P999} {
		if v > l.Max || v < l.Min {
			t.Errorf("%s = %v outside [min %v, max %v]", name, v, l.Min, l.Max)
		}
	}
}
