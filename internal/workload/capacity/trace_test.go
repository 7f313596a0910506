package capacity

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/replay"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

// TestSearchTrace: over a trace, capacity searches the highest speed whose
// replay meets the SLO (the search over the trace's own rate times the
// speed); each step replays for its duration at its rate, reading the
// short trace again as often as it needs. An SLO no speed meets is a
// finding ("none"), its steps kept.
func TestSearchTrace(t *testing.T) {
	st := workloadtest.Openers["memory"](t)
	rp := replay.Params{Trace: "sample:csv", Load: workload.Load{Clients: 2}}.WithDefaults()
	s := Search{SLO: []string{"p99<=50ms"}, MaxRate: 4000, MinStep: time.Second, MaxStep: 2 * time.Second, MaxSteps: 8, Precision: 0.2}
	rate, _, err := rp.TraceRate()
	if err != nil {
		t.Fatal(err)
	}
	phases, sum, err := SearchTrace(context.Background(), st, rp, s, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Capacity) != 1 || !sum.Capacity[0].Found || sum.Capacity[0].OpsS < 2*rate {
		for _, s := range sum.Steps {
			t.Logf("step %+v", s)
		}
		t.Fatalf("capacity %+v: want one found above twice the trace's %.0f requests/s", sum.Capacity, rate)
	}
	if c := sum.Capacity[0]; math.Abs(c.Speed-c.OpsS/rate) > 1e-9 {
		t.Errorf("speed %v: want %v / %v", c.Speed, c.OpsS, rate)
	}
	if len(phases) == 0 || len(sum.Steps) == 0 {
		t.Fatalf("%d phases, %d steps", len(phases), len(sum.Steps))
	}
	fast := 0
	for _, s := range sum.Steps {
		// A step of 1 s at 8× the 4-second trace replays it twice over
		// (its rate rises and falls within each pass): its ops are the
		// offered rate's. Slower steps see part of a pass.
		if s.OfferedOpsS < 7.9*rate {
			continue
		}
		fast++
		if got := float64(s.Ops) / s.DurationS; math.Abs(got-s.OfferedOpsS) > 0.15*s.OfferedOpsS {
			t.Errorf("step %v at %.0f/s: %d ops in %.2fs (%.0f/s)", s.Phases, s.OfferedOpsS, s.Ops, s.DurationS, got)
		}
	}
	if fast == 0 {
		t.Errorf("no step at 8× the trace's rate or more: %+v", sum.Capacity)
	}
	if !strings.Contains(strings.Join(sum.Notes, " "), "speed factor") {
		t.Errorf("notes %q: the speed is not said", sum.Notes)
	}

	s = Search{SLO: []string{"p50<=1us"}, MinStep: time.Second, MaxStep: time.Second, MaxSteps: 3}
	if _, sum, err := SearchTrace(context.Background(), st, rp, s, workload.Hooks{}); err != nil || sum == nil || len(sum.Steps) == 0 || sum.Capacity[0].Found {
		t.Errorf("an SLO no speed meets: err %v, summary %+v", err, sum)
	}
	if _, _, err := (replay.Params{Trace: "sample:kvcache-v1"}).TraceRate(); err == nil {
		t.Error("an untimed trace has a rate")
	}
}
