package load

import (
	"context"
	"testing"
	"time"
)

// A rate so low that most workers' slots lie beyond what a time.Duration
// holds (issue 15: 1e-9 ops/s over 50 workers ran flat out at millions of
// ops/s with a "max lag" of 292 years): the schedule is kept, not wrapped.
// Worker 0's first slot, at the start, is the one op that falls in the phase.
func TestOpenLoopScheduleBeyondDurationRangeDoesNotWrap(t *testing.T) {
	ws, fs := workers(50, nil)
	start := time.Now()
	p, err := Run(context.Background(), Config{Workers: 50, Duration: time.Second, Rate: 1e-9}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if n := sumCalls(fs); n != 1 || p.Ops != 1 {
		t.Fatalf("%d calls, %d ops recorded; want the one op the schedule has in the phase", n, p.Ops)
	}
	if p.OpenLoop == nil || p.OpenLoop.MaxLagUs > 1e6 || p.LatencyUs.Max > 1e6 {
		t.Fatalf("open loop %+v, max latency %v µs: an op counted from a wrapped intended start", p.OpenLoop, p.LatencyUs.Max)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v for a 1 s phase", d)
	}
}
