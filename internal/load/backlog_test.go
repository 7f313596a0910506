package load

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// A worker whose every op takes twice its interval falls behind by half its
// schedule each second: the backlog of due ops grows by ~rate/2 per second,
// the ones still due at the end are counted as unsent, and the lateness is
// the server's (each late op waited for the previous reply), not the
// client's.
func TestBacklogGrowsWhenTheServerIsSlow(t *testing.T) {
	const rate = 500 // one op every 2 ms; each takes 4 ms
	ws, _ := workers(1, func(context.Context, int64) error { time.Sleep(4 * time.Millisecond); return nil })
	p, err := Run(context.Background(), Config{Workers: 1, Duration: 3 * time.Second, Rate: rate}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Series) < 3 {
		t.Fatalf("series %+v", p.Series)
	}
	// Sent at most 250/s of 500 due: by the end of second s, >= 250*(s+1)
	// wait (a sleep only ever oversleeps, so never fewer).
	for s := range 3 {
		if got, least := p.Series[s].Backlog, int64(200*(s+1)); got < least {
			t.Errorf("second %d: backlog %d, want >= %d (%+v)", s, got, least, p.Series)
		}
	}
	if !(p.Series[2].Backlog > p.Series[1].Backlog && p.Series[1].Backlog > p.Series[0].Backlog) {
		t.Errorf("backlog does not grow: %+v", p.Series)
	}
	ol := p.OpenLoop
	if ol == nil {
		t.Fatal("no open-loop figures")
	}
	if due := int64(3 * rate); ol.UnsentOps < due/3 || ol.UnsentOps+p.Ops != due {
		t.Errorf("unsent %d + sent %d, want %d due with >= %d unsent", ol.UnsentOps, p.Ops, due, due/3)
	}
	// Each op starts as the previous reply comes in: the client added no
	// delay of its own (a rare scheduling hiccup on a shared machine aside).
	if ol.ClientLateOps > 2 || ol.LateOps < p.Ops/2 {
		t.Errorf("late %d, client-late %d of %d ops", ol.LateOps, ol.ClientLateOps, p.Ops)
	}
}

// A worker that keeps its schedule leaves no backlog and nothing unsent.
func TestNoBacklogWhenKeepingUp(t *testing.T) {
	ws, _ := workers(2, nil)
	p, err := Run(context.Background(), Config{Workers: 2, Duration: 2 * time.Second, Rate: 400}, ws)
	if err != nil {
		t.Fatal(err)
	}
	// One interval is 5 ms per worker: a scheduling hiccup on a busy
	// machine may leave one op due at a sample, not a queue.
	for _, s := range p.Series {
		if s.Backlog > 2 {
			t.Errorf("second %d: backlog %d (%+v)", s.T, s.Backlog, p.Series)
		}
	}
	if p.OpenLoop == nil || p.OpenLoop.UnsentOps != 0 {
		t.Errorf("open loop %+v", p.OpenLoop)
	}
}

// When the worker is idle before its intended start but cannot run because
// the client's only CPU is busy with something else, the lateness is the
// client's: the ops it started late with nothing to wait for count as
// client-late, by the delay the client added (the ops queued behind them
// are late, not client-late).
func TestClientLatenessIsSeparated(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	hogDone := make(chan struct{})
	go func() { // holds the only P until the runtime preempts it (~10 ms)
		defer close(hogDone)
		for !stop.Load() {
		}
	}()
	ws, _ := workers(1, nil)
	p, err := Run(context.Background(), Config{Workers: 1, Duration: time.Second, Rate: 200}, ws)
	stop.Store(true)
	<-hogDone
	if err != nil {
		t.Fatal(err)
	}
	ol := p.OpenLoop
	if ol == nil || ol.ClientLateOps < 5 || ol.ClientLateOps > ol.LateOps || ol.ClientMaxLagUs < 5000 {
		t.Fatalf("open loop %+v of %d ops", ol, p.Ops)
	}
}

// The backlog sample is one field write: recording it allocates nothing.
func TestBacklogDoesNotAllocate(t *testing.T) {
	r := metrics.NewRecorder(metrics.NewCollector(nil))
	r.SetSchedule(time.Millisecond)
	r.Start(time.Now())
	if n := testing.AllocsPerRun(1000, func() { r.Lag(3 * time.Millisecond) }); n != 0 {
		t.Fatalf("%v allocs per Lag", n)
	}
}

// An open loop with slack spins for up to its spin window (at most
// maxSpinWindow) before each intended start: the phase says how long, so
// its CPU per op can be told from the engine's waiting.
func TestWaitSpinIsMeasured(t *testing.T) {
	ws, _ := workers(1, nil)
	p, err := Run(context.Background(), Config{Workers: 1, Duration: time.Second, Rate: 500}, ws)
	if err != nil {
		t.Fatal(err)
	}
	// 500 waits of up to maxSpinWindow each (a wait that wakes late spins less).
	if s := p.OpenLoop.WaitSpinS; s <= 0 || s > 500*1.5*maxSpinWindow.Seconds() {
		t.Fatalf("spin %v s over %d ops; client CPU %v s", s, p.Ops, p.ClientCPUS)
	}
	t.Logf("spin %.4f s of client CPU %.4f s over %d ops", p.OpenLoop.WaitSpinS, p.ClientCPUS, p.Ops)
}
