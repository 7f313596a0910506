package load

import (
	"context"
	"strings"
	"testing"
	"time"
)

// pacedWorker sends its ops at the offsets given, each taking hold.
type pacedWorker struct {
	at   []time.Duration
	hold time.Duration
	i    int
	lags []time.Duration
}

func (w *pacedWorker) Next(context.Context) (time.Duration, bool) {
	if w.i >= len(w.at) {
		return 0, false
	}
	w.i++
	return w.at[w.i-1], true
}

func (w *pacedWorker) Late(lag time.Duration) { w.lags = append(w.lags, lag) }

func (w *pacedWorker) Do(context.Context, int64) error {
	time.Sleep(w.hold)
	return nil
}

// A paced phase sends each op at its own start, ends after the last, and
// counts the latency of an op queued behind a slow one from its intended
// start.
func TestPacedWorkersKeepTheirSchedule(t *testing.T) {
	a := &pacedWorker{at: []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}}
	// b's second op is due 10 ms after its first, which holds 50 ms: it is
	// sent ~40 ms late and its latency counts from its due time.
	b := &pacedWorker{at: []time.Duration{0, 10 * time.Millisecond}, hold: 50 * time.Millisecond}
	p, err := Run(context.Background(), Config{Name: "replay", Workers: 2, Paced: true}, []Worker{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if p.Ops != 6 {
		t.Fatalf("%d ops, want 6", p.Ops)
	}
	if p.DurationS < 0.3 || p.DurationS > 0.4 {
		t.Errorf("duration %.3fs, want the schedule's 0.3s", p.DurationS)
	}
	if len(b.lags) != 2 || b.lags[1] < 35*time.Millisecond {
		t.Errorf("b's lags %v, want the second ~40ms late", b.lags)
	}
	for _, lag := range a.lags {
		if lag > 5*time.Millisecond {
			t.Errorf("a's ops were sent %v late on an idle schedule", a.lags)
		}
	}
	if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[len(p.Warnings)-1], " of 6 ops (") {
		t.Errorf("warnings %q: want b's late op told", p.Warnings)
	}
	if p.LatencyUs.Max < 85e3 {
		t.Errorf("max latency %.0f µs, want b's second op's ~90 ms from its due time", p.LatencyUs.Max)
	}
}

// Negative starts are sent as soon as the worker is free.
func TestPacedAsFastAsFree(t *testing.T) {
	w := &pacedWorker{at: []time.Duration{-1, -1, -1}}
	start := time.Now()
	p, err := Run(context.Background(), Config{Name: "replay", Workers: 1, Paced: true}, []Worker{w})
	if err != nil || p.Ops != 3 || time.Since(start) > time.Second {
		t.Fatalf("ops %d err %v after %v", p.Ops, err, time.Since(start))
	}
	if err := (Config{Name: "x", Workers: 1, Paced: true, Ops: 5}).Validate(); err == nil {
		t.Error("a paced phase with ops validated")
	}
	if _, err := Run(context.Background(), Config{Name: "x", Workers: 1, Paced: true}, []Worker{&funcWorker{}}); err == nil {
		t.Error("a paced phase ran a worker without starts")
	}
}
