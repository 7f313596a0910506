package load

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// kindWorker is a funcWorker that says which kind each op was: fn returns
// the kind's index with the op's error.
type kindWorker struct {
	kind int
	fn   func(seq int64) (int, error)
}

func (w *kindWorker) Do(_ context.Context, seq int64) error {
	var err error
	w.kind, err = w.fn(seq)
	return err
}

func (w *kindWorker) Kind() int { return w.kind }

func kindWorkers(n int, fn func(seq int64) (int, error)) []Worker {
	ws := make([]Worker, n)
	for i := range ws {
		ws[i] = &kindWorker{fn: fn}
	}
	return ws
}

func TestByOpSplitsThePhase(t *testing.T) {
	// seq%4 == 0 is a "set" (slow, every other one failing), else a "get".
	ws := kindWorkers(3, func(seq int64) (int, error) {
		if seq%4 != 0 {
			return 0, nil
		}
		if seq%8 == 0 {
			return 1, errors.New("set failed")
		}
		time.Sleep(200 * time.Microsecond)
		return 1, nil
	})
	p, err := Run(context.Background(), Config{Workers: 3, Ops: 4000, Kinds: []string{"get", "set"}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	get, set := p.ByOp["get"], p.ByOp["set"]
	if len(p.ByOp) != 2 || get.Ops != 3000 || set.Ops != 1000 || get.Ops+set.Ops != p.Ops {
		t.Fatalf("phase ops %d, by op %+v", p.Ops, p.ByOp)
	}
	if len(get.Errors) != 0 || set.Errors["other"] != 500 || p.Errors["other"] != 500 {
		t.Fatalf("errors: get %v, set %v, phase %v", get.Errors, set.Errors, p.Errors)
	}
	for name, o := range p.ByOp {
		h, err := metrics.DecodeHistogram(o.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		var errs int64
		for _, n := range o.Errors {
			errs += n
		}
		if h.TotalCount() != o.Ops-errs {
			t.Errorf("%s: histogram holds %d, want its %d successes", name, h.TotalCount(), o.Ops-errs)
		}
		if o.ThroughputOpsS <= 0 || o.LatencyUs.P50 <= 0 {
			t.Errorf("%s: figures %+v", name, o)
		}
	}
	if set.LatencyUs.P50 < 200 || get.LatencyUs.P50 >= set.LatencyUs.P50 {
		t.Errorf("p50 get %v µs, set %v µs: the slow sets must show", get.LatencyUs.P50, set.LatencyUs.P50)
	}
	if histCount(t, p) != 3500 {
		t.Errorf("phase histogram holds %d, want the 3500 successes of both kinds", histCount(t, p))
	}
}

func TestByOpOpenLoopCountsFromIntendedStart(t *testing.T) {
	// Op 300, a "set", stalls 200 ms; the gets due meanwhile are late, and
	// their latency must count from when they were due, as the phase's does.
	const stall = 200 * time.Millisecond
	var once sync.Once
	ws := kindWorkers(1, func(seq int64) (int, error) {
		if seq == 300 {
			once.Do(func() { time.Sleep(stall) })
			return 1, nil
		}
		return 0, nil
	})
	p, err := Run(context.Background(), Config{Workers: 1, Ops: 1000, Rate: 1000, Kinds: []string{"get", "set"}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if get := p.ByOp["get"]; get.LatencyUs.Max < float64(stall/2/time.Microsecond) || get.LatencyUs.P90 < 1000 {
		t.Fatalf("gets due during the stall: max %v µs, p90 %v µs; want the stall to show", get.LatencyUs.Max, get.LatencyUs.P90)
	}
	if set := p.ByOp["set"]; set.Ops != 1 || set.LatencyUs.Max < float64(stall/time.Microsecond) {
		t.Fatalf("set %+v", set)
	}
}

func TestByOpOnlyForKindedWorkers(t *testing.T) {
	ws, _ := workers(2, nil)
	p, err := Run(context.Background(), Config{Workers: 2, Ops: 100, Kinds: []string{"get"}}, ws)
	if err != nil || p.ByOp != nil {
		t.Fatalf("plain workers: by op %v, err %v", p.ByOp, err)
	}
	p, err = Run(context.Background(), Config{Workers: 2, Ops: 100}, kindWorkers(2, func(int64) (int, error) { return 0, nil }))
	if err != nil || p.ByOp != nil {
		t.Fatalf("no kinds configured: by op %v, err %v", p.ByOp, err)
	}
	if _, err := Run(context.Background(), Config{Workers: 1, Ops: 10, Kinds: []string{"get", "get"}}, kindWorkers(1, nil)); err == nil {
		t.Fatal("duplicate kinds accepted")
	}
	_, err = Run(context.Background(), Config{Workers: 1, Ops: 10, Kinds: []string{"get"}}, kindWorkers(1, func(int64) (int, error) { return 1, nil }))
	if err == nil {
		t.Fatal("a kind out of range did not fail the phase")
	}
}

func TestKindedHotPathDoesNotAllocate(t *testing.T) {
	const n, from, to = 200_000, 10_000, 190_000
	for _, rate := range []float64{0, 1e6} {
		var a, b runtime.MemStats
		ws := kindWorkers(2, func(seq int64) (int, error) {
			switch seq {
			case from:
				runtime.ReadMemStats(&a)
			case to:
				runtime.ReadMemStats(&b)
			}
			return int(seq & 1), nil
		})
		if _, err := Run(context.Background(), Config{Workers: 2, Ops: n, Rate: rate, Kinds: []string{"get", "set"}}, ws); err != nil {
			t.Fatal(err)
		}
		if d := b.Mallocs - a.Mallocs; d > 50 {
			t.Errorf("rate %v: %d allocations during %d ops", rate, d, to-from)
		}
	}
}
