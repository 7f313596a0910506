package capacity_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

// Not committed: writes a real capacity cell for the report's sample.
func TestGenSample(t *testing.T) {
	out := os.Getenv("CAP_SAMPLE")
	if out == "" {
		t.Skip()
	}
	st := redisBehindRTT(t, 2*time.Millisecond)
	ws := getters(t, st, 4, 0)
	step := capacity.EngineStep(ws, load.Config{Warmup: 200 * time.Millisecond}, workload.Hooks{})
	closed := capacity.EngineClosed(func(ctx context.Context, n int) ([]load.Worker, func(), error) {
		return getters(t, st, n, 0), func() {}, nil
	}, load.Config{Warmup: 200 * time.Millisecond}, workload.Hooks{})
	p := capacity.Params{
		SLOs: []capacity.SLO{mustSLO(t, "p99<=100ms"), mustSLO(t, "p99.9<=10ms,p50<=3ms")}, Connections: 4,
		StartRate: 250, MinStep: 2 * time.Second, MaxStep: 6 * time.Second, Need: 5000,
		USLClients: []int{1, 2, 4, 8, 16}, USLDuration: time.Second,
	}
	sum, phases, err := capacity.Run(context.Background(), capacity.Drive{Step: step, Closed: closed}, p)
	if err != nil {
		t.Fatal(err)
	}
	mem := getters(t, workloadtest.Openers["memory"](t), 2, 0)
	mstep := capacity.EngineStep(mem, load.Config{Warmup: 200 * time.Millisecond}, workload.Hooks{})
	mp := capacity.Params{SLOs: []capacity.SLO{mustSLO(t, "p99<=1ms")}, Connections: 2, StartRate: 2000, MaxRate: 16000,
		MinStep: 2 * time.Second, MaxStep: 4 * time.Second, Need: 50000}
	msum, mphases, err := capacity.Run(context.Background(), capacity.Drive{Step: mstep}, mp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(map[string]any{"summary": sum, "phases": phases, "msummary": msum, "mphases": mphases}, "", "  ")
	os.WriteFile(out, b, 0o644)
}
