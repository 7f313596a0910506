package cli

import (
	"bytes"
	"context"
	"github.com/storebench/storebench/internal/workload/all"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/netem"
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

// proxyGone checks that nothing listens on a proxy's address any more.
func proxyGone(t *testing.T, addr string) {
	t.Helper()
	ls, err := netem.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ls, addr) {
		t.Errorf("proxy %s still listening (/proc/self/net/tcp)", addr)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s: the proxy still answers", addr)
	}
}

// TestRunNetworkInterrupted: a run whose second cell is cancelled (Ctrl-C)
// half-way behind a 1 ms network closes its proxy: nothing listens on the
// address recorded by the first cell, and the run reports the interruption.
func TestRunNetworkInterrupted(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "net.yaml")
	yaml := `name: net-interrupt
targets: [redis]
workloads:
  - {type: hotkey, name: short, load: {clients: 1, ops: 50, rtt: 1ms}}
  - {type: hotkey, name: long, load: {clients: 1, ops: 10000000, rtt: 1ms}}
`
	if err := os.WriteFile(sc, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	done := make(chan int)
	go func() {
		done <- netApp(&buf).Main(ctx, []string{"run", sc, "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet"})
	}()
	// Cancel once the first cell is written and the second has run a while.
	var proxy string
	deadline := time.Now().Add(2 * time.Minute)
	for proxy == "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
		if len(matches) == 1 {
			if r, err := result.Read(matches[0]); err == nil && len(r.Cells) == 1 {
				proxy, _ = r.Cells[0].Params["net_proxy"].(string)
			}
		}
	}
	if proxy == "" {
		t.Fatalf("the first cell recorded no proxy\n%s", buf.String())
	}
	time.Sleep(time.Second)
	cancel()
	if code := <-done; code != ExitFailed {
		t.Errorf("exit %d, want %d\n%s", code, ExitFailed, buf.String())
	}
	if !strings.Contains(buf.String(), "interrupted") {
		t.Errorf("output does not say interrupted:\n%s", buf.String())
	}
	proxyGone(t, proxy)
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
	proxyGone(t, p["net_proxy"].(string))

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
