package doctor

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/hiccup"
)

// TestBriefRunMeasures: a brief run makes every check, with figures that
// come from measurements (wake-ups counted, round trips timed).
func TestBriefRunMeasures(t *testing.T) {
	r, err := Run(context.Background(), Options{Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Check{}
	for _, c := range r.Checks {
		names[strings.SplitN(c.Name, ",", 2)[0]] = c
		if c.Value == "" {
			t.Errorf("check %q has no value", c.Name)
		}
	}
	for _, want := range []string{"CPUs", "idle CPU wake-up", "wake-up every 1 ms", "loopback round trip", "steal time", "cgroup CPU quota", "timer slack", "frequency governor", "transparent huge pages"} {
		if _, ok := names[want]; !ok {
			t.Errorf("no %q check in %v", want, r.Checks)
		}
	}
	if r.IdleWake.Wakes < 20 || r.TickWake.Wakes < 200 {
		t.Errorf("idle wake-ups %d, 1 ms wake-ups %d: the probes did not run", r.IdleWake.Wakes, r.TickWake.Wakes)
	}
	if r.RTTSameCPU == nil || r.RTTSameCPU.Error != "" || r.RTTSameCPU.N != 500 || r.RTTSameCPU.P50 <= 0 || r.RTTSameCPU.P50 > r.RTTSameCPU.Max {
		t.Errorf("same-CPU round trips %+v", r.RTTSameCPU)
	}
	if runtime.NumCPU() > 1 && (r.RTTAcrossCPUs == nil || r.RTTAcrossCPUs.Error != "" || r.RTTAcrossCPUs.CPUs[0] == r.RTTAcrossCPUs.CPUs[1]) {
		t.Errorf("across-CPU round trips %+v", r.RTTAcrossCPUs)
	}
}

// A canceled context ends the checks with its error instead of a report.
func TestRunStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{Brief: true}); err == nil {
		t.Error("a canceled run returned a report")
	}
}

// wakeCheck's meaning follows the figures: a p99 of 10 ms names the SLOs
// this machine cannot judge; prompt wake-ups say sub-millisecond is fine.
func TestWakeCheckMeaning(t *testing.T) {
	slow := wakeCheck("idle", "x", figuresUS(200, 10000, 12000))
	if !strings.Contains(slow.Meaning, "p99 SLOs under ~20.0 ms measure this machine") || slow.Help == "" {
		t.Errorf("slow: %+v", slow)
	}
	prompt := wakeCheck("idle", "x", figuresUS(60, 200, 400))
	if !strings.Contains(prompt.Meaning, "sub-millisecond") || prompt.Help != "" {
		t.Errorf("prompt: %+v", prompt)
	}
}

func figuresUS(p50, p99, max float64) (f hiccup.Figures) {
	f.P50, f.P99, f.Max, f.Wakes = p50, p99, max, 100
	return f
}
