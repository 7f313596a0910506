package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// TestRunReplayFlags: run replay (the suite) with --trace replays that
// trace alone; --trace-format and --speed reach its cells (a cell per
// speed, recorded); a trace that cannot run is refused before any work, in
// one line naming the file and line, exit 2.
func TestRunReplayFlags(t *testing.T) {
	out, dir := t.TempDir(), t.TempDir()
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "replay", "--stores", "memory", "--trace", "sample:csv",
		"--trace-format", "csv", "--speed", "8,max", "--clients", "2", "--out", out, "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	r := readOnlyResult(t, out)
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells, want speed 8 and max", len(r.Cells))
	}
	for i, speed := range []string{"8", "max"} {
		c := r.Cells[i]
		if !strings.HasSuffix(c.ID, "/replay/speed="+speed) || c.Params["trace"] != "sample:csv" || c.Params["trace_format"] != "csv" || c.Params["clients"] != float64(2) {
			t.Errorf("cell %s params %v", c.ID, c.Params)
		}
		if c.Status != result.CellOK || c.Replay == nil || c.Replay.Replayed == 0 || c.Replay.Replayed+c.Replay.Unsupported["scan"] != c.Replay.Requests {
			t.Errorf("cell %s: status %s, replay %+v", c.ID, c.Status, c.Replay)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("time_us,op,key,value_size,ttl_s\n0,get,a,0,0\nnot a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "replay", "--stores", "memory", "--trace", bad}, bad + ":3: "},
		{[]string{"run", "replay", "--stores", "memory", "--trace", bad, "--trace-format", "pcap"}, `unknown trace format "pcap"`},
		{[]string{"run", "replay", "--stores", "memory", "--trace", ""}, "no trace: give --trace FILE"},
		{[]string{"run", "replay", "--stores", "memory", "--trace", "sample:csv", "--speed", "0"}, `speed "0"`},
		{[]string{"run", "replay", "--stores", "memory", "--trace", "sample:csv", "--ops", "10"}, "the trace gives the requests"},
		{[]string{"run", "mix", "--stores", "memory", "--trace", bad}, "mix: field trace does not apply"},
	} {
		buf.Reset()
		code := netApp(&buf).Main(context.Background(), append(c.args, "--out", out))
		if code != ExitUsage || !strings.Contains(buf.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want exit 2 saying %q", c.args, code, buf.String(), c.want)
		}
	}
}

// `run capacity --trace` searches the trace's speed (issue 30): the flag
// lands on the capacity suite's entries, each capacity is said as a speed
// factor of the trace, and the knee curve is there.
func TestCapacityOverATrace(t *testing.T) {
	var buf bytes.Buffer
	out := t.TempDir()
	code := netApp(&buf).Main(context.Background(), []string{"run", "capacity", "--trace", "sample:csv", "--stores", "memory",
		"--slo", "p99<=1s", "--quick", "--no-hiccup", "--out", out, "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	if !strings.Contains(buf.String(), "× the trace") || !strings.Contains(buf.String(), "knee curve") {
		t.Errorf("no speed factor or knee curve:\n%s", buf.String())
	}
	res := readOnlyResult(t, out)
	c := res.Cells[0].Capacity
	if c == nil || len(c.Capacity) != 1 || c.Capacity[0].Speed <= 0 || len(c.Steps) < 2 {
		t.Fatalf("capacity %+v", c)
	}
}
