package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
)

// netApp is testApp writing to out.
func netApp(out *bytes.Buffer) *App {
	app := testApp()
	app.Stdout, app.Stderr = out, out
	return app
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
