package load

import (
	"context"
	"math"
	"strings"
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

func TestValidateRate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // "" = valid
	}{
		{Config{Workers: 1, Duration: time.Second, Rate: 1e8}, ""},
		{Config{Workers: 1, Duration: time.Second, Rate: 1e300}, "at most 1e+08"},
		{Config{Workers: 1, Duration: time.Second, Rate: math.NaN()}, "rate must be a finite number"},
		{Config{Workers: 1, Duration: time.Second, Rate: math.Inf(1)}, "rate must be a finite number"},
		// 10 ops at 1e-9 ops/s take 317 years: more than a Duration holds.
		{Config{Workers: 1, Ops: 10, Rate: 1e-9}, "cannot schedule"},
		{Config{Workers: 1, Ops: 10, Rate: 1e-6}, ""},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: unexpected %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
