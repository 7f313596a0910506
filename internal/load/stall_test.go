package load_test

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/redis"
)

type getter struct {
	kv  store.KV
	key []byte
	buf []byte
}

func (g *getter) Do(ctx context.Context, _ int64) error {
	v, _, err := g.kv.Get(ctx, g.key, g.buf[:0])
	g.buf = v
	return err
}

// stalledRun drives a managed Redis while it is stopped (SIGSTOP) for stall,
// starting at stallAt, and returns the phase.
func stalledRun(t *testing.T, srv *server.Server, cfg load.Config, stallAt, stall time.Duration) metrics.Phase {
	t.Helper()
	ctx := context.Background()
	st, err := redis.New(ctx, redis.Config{URL: srv.URL, Namespace: "stall", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	workers := make([]load.Worker, cfg.Workers)
	for i := range workers {
		c, err := st.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		workers[i] = &getter{kv: c.(store.KV), key: []byte("k"), buf: make([]byte, 0, 16)}
	}
	var stopped atomic.Bool
	timer := time.AfterFunc(stallAt, func() {
		syscall.Kill(srv.PID, syscall.SIGSTOP)
		stopped.Store(true)
		time.Sleep(stall)
		syscall.Kill(srv.PID, syscall.SIGCONT)
	})
	defer timer.Stop()
	p, err := load.Run(ctx, cfg, workers)
	if err != nil {
		t.Fatal(err)
	}
	if !stopped.Load() {
		t.Fatal("the stall never happened: the phase ended first")
	}
	return p
}

func slowOps(t *testing.T, p metrics.Phase, over time.Duration) int64 {
	t.Helper()
	n, err := p.SlowerThan(over)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStallShowsInOpenLoopOnly stops a managed Redis for 500 ms during a run.
// Open loop (fixed rate, latency from the intended start) must charge the
// stall to every op that was due during it; closed loop records it only for
// the ops in flight — which is what coordinated omission hides.
func TestStallShowsInOpenLoopOnly(t *testing.T) {
	srv := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
	const (
		rate    = 1000.0
		stall   = 500 * time.Millisecond
		stallAt = 700 * time.Millisecond
		workers = 4
	)
	open := stalledRun(t, srv, load.Config{Name: "open", Workers: workers, Rate: rate, Duration: 2 * time.Second}, stallAt, stall)
	closed := stalledRun(t, srv, load.Config{Name: "closed", Workers: workers, Duration: 2 * time.Second}, stallAt, stall)

	// Ops due in the first 400 ms of the stall each waited at least 100 ms.
	dueDuringStall := int64(rate * (stall - 100*time.Millisecond).Seconds())
	openSlow, closedSlow := slowOps(t, open, 100*time.Millisecond), slowOps(t, closed, 100*time.Millisecond)
	t.Logf("ops slower than 100 ms: open loop %d of %d, closed loop %d of %d (expected ≈%d and ≤%d)",
		openSlow, open.Ops, closedSlow, closed.Ops, dueDuringStall, workers)
	if openSlow < dueDuringStall/2 {
		t.Errorf("open loop: only %d ops slower than 100 ms; every op due during the stall (≈%d) should be", openSlow, dueDuringStall)
	}
	// Only the ops in flight can wait out the stall; the bound leaves room
	// for one pause of the VM itself (another op per worker), still far
	// below what the open loop records.
	if closedSlow > 2*workers {
		t.Errorf("closed loop: %d ops slower than 100 ms; only the %d in flight (and one VM pause) can be", closedSlow, workers)
	}
	if open.LatencyUs.Max < 400e3 || closed.LatencyUs.Max < 400e3 {
		t.Errorf("max latency open %v µs closed %v µs; both should show the 500 ms stall", open.LatencyUs.Max, closed.LatencyUs.Max)
	}
	if open.LatencyUs.P99 <= closed.LatencyUs.P99 {
		t.Errorf("p99 open %v µs <= closed %v µs: the open loop should expose the stall in its percentiles", open.LatencyUs.P99, closed.LatencyUs.P99)
	}
}
