package cli

import (
	"bytes"
	"context"
	"github.com/storebench/storebench/internal/workload/all"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/target"
)

func netApp(out *bytes.Buffer) *App {
	reg := target.Registry{
		{Name: "memory", Prototype: (*memory.Store)(nil), Batches: true, Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
			return memory.New(ctx, memory.Config{Namespace: a.Namespace})
		}},
		{Name: "redis", Server: server.Redis, Schemes: []string{"redis"}, Prototype: (*redis.Store)(nil), Batches: true, Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
			return redis.New(ctx, redis.Config{URL: a.URL, Namespace: a.Namespace})
		}},
	}
	return &App{Registry: reg, Workloads: all.Types(), Stdout: out, Stderr: out, Version: "test", Commit: "test"}
}

// TestRunRTTFlag: --rtt on the command line puts every cell of a server
// target behind the network, records asked and measured round trips, and
// leaves no proxy behind; for an in-process store it is an error before
// any work.
func TestRunRTTFlag(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "hotkey", "--stores", "redis", "--ops", "200", "--rtt", "2ms", "--jitter", "0.2ms",
		"--bandwidth", "100mbit", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	r, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cells[0]
	p := c.Params
	if p["rtt_ms"] != 2.0 || p["jitter_ms"] != 0.2 || p["bandwidth"] != "100mbit" || p["net_mechanism"] == nil || p["rtt_measured_ms"] == nil {
		t.Errorf("params %v", p)
	}
	if m, _ := p["rtt_measured_ms"].(float64); m < 1.6 || m > 3 {
		t.Errorf("measured %v ms for 2 ms", m)
	}
	if p50 := c.Phases[0].LatencyUs.P50; p50 < 1600 {
		t.Errorf("p50 %v µs behind a 2 ms network", p50)
	}

	buf.Reset()
	code = netApp(&buf).Main(context.Background(), []string{"run", "hotkey", "--stores", "memory", "--rtt", "1ms", "--out", out})
	if code != ExitUsage || !strings.Contains(buf.String(), "no network to delay") {
		t.Errorf("memory with --rtt: exit %d, %s", code, buf.String())
	}
	buf.Reset()
	code = netApp(&buf).Main(context.Background(), []string{"run", "hotkey", "--stores", "redis", "--jitter", "1ms", "--out", out})
	if code != ExitUsage || !strings.Contains(buf.String(), "need an rtt") {
		t.Errorf("--jitter without --rtt: exit %d, %s", code, buf.String())
	}
}
