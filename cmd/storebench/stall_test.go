package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// partialResult reads a run's result.json while it is being written; nil
// before it exists.
func partialResult(out string) *result.Result {
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		return nil
	}
	r, err := result.Read(matches[0])
	if err != nil {
		return nil
	}
	return r
}

func slowerThan(t *testing.T, p metrics.Phase, over time.Duration) int64 {
	t.Helper()
	n, err := p.SlowerThan(over)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunCoordinatedOmissionQuick runs the suite as a user does. Once the
// two stalled cells are written, the managed Redis, which serves the next
// cells, must be running, not stopped; the open loop must charge the 500 ms
// stall to the ~1,000 GETs due during it, the closed loop only to the few
// in flight; and the summary must show both side by side.
func TestRunCoordinatedOmissionQuick(t *testing.T) {
	out := t.TempDir()
	p := testkit.Start(t, exec.Command(testkit.Binary(t), "run", "coordinated-omission", "--quick", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet"))

	pid, checked := 0, false
	exited := testkit.WaitFor(2*time.Minute, 20*time.Millisecond, func() bool {
		if exited, _, _ := p.Exited(); exited {
			return true
		}
		if r := partialResult(out); !checked && r != nil && len(r.Cells) >= 2 && len(r.Cells) < 4 && len(r.Targets) == 1 {
			pid = r.Targets[0].ServerPID
			if st := testkit.ProcState(pid); st == "" || st == "T" {
				t.Errorf("after the stalled cells, the server (pid %d) is in state %q, want running", pid, st)
			}
			checked = true
		}
		return false
	})
	if !exited {
		t.Fatalf("the quick suite took over 2 minutes\nstderr: %s", p.Stderr)
	}
	if code := p.WaitExit(t, time.Second); code != 0 {
		t.Fatalf("run: exit code %d\nstdout: %s\nstderr: %s", code, p.Stdout, p.Stderr)
	}
	if !checked {
		t.Fatal("the run ended before the server could be checked between cells")
	}
	if st := testkit.ProcState(pid); st != "" {
		t.Errorf("server pid %d still exists after the run (state %s)", pid, st)
	}

	r := partialResult(out)
	if r == nil || len(r.Cells) != 4 {
		t.Fatalf("want 4 cells, result %+v", r)
	}
	phases := map[string]metrics.Phase{}
	for _, c := range r.Cells {
		if c.Status != result.CellOK || len(c.Phases) != 1 {
			t.Fatalf("cell %s: %s %s, %d phases", c.ID, c.Status, c.Error, len(c.Phases))
		}
		phases[c.Name] = c.Phases[0]
	}
	for _, name := range []string{"open-loop-stall", "closed-loop-stall"} {
		p := phases[name]
		if len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], "stall: SIGSTOP to redis pid "+strconv.Itoa(pid)) {
			t.Errorf("%s: notes %q, want what the stall did", name, p.Notes)
		}
	}
	open, closed := phases["open-loop-stall"], phases["closed-loop-stall"]
	openSlow, closedSlow := slowerThan(t, open, 100*time.Millisecond), slowerThan(t, closed, 100*time.Millisecond)
	t.Logf("slower than 100 ms: open loop %d of %d (p99 %.0f µs), closed loop %d of %d (p99 %.0f µs)",
		openSlow, open.Ops, open.LatencyUs.P99, closedSlow, closed.Ops, closed.LatencyUs.P99)
	// 2,000/s × 0.5 s are due during the stall; those due in its first 400 ms wait over 100 ms.
	if openSlow < 400 {
		t.Errorf("open loop: %d ops slower than 100 ms, want most of the ~800 due early in the stall", openSlow)
	}
	// 4 clients in flight, and a little room for this shared machine's own hiccups.
	if closedSlow > openSlow/10 {
		t.Errorf("closed loop: %d ops slower than 100 ms, open loop %d", closedSlow, openSlow)
	}
	if open.LatencyUs.P99 <= closed.LatencyUs.P99 || open.LatencyUs.P99 < 100e3 {
		t.Errorf("p99 open %v µs, closed %v µs: the open loop's should show the stall", open.LatencyUs.P99, closed.LatencyUs.P99)
	}

	text := p.Stdout.String()
	i := strings.Index(text, "\ncoordinated omission:")
	if i < 0 {
		t.Fatalf("the summary has no coordinated omission table:\n%s", text)
	}
	section := text[i:]
	for _, want := range []string{"redis:none/open-loop-stall", "redis:none/closed-loop-stall", "open, 2,000/s", "500ms at 1s", "closed loop records a stall once per client"} {
		if !strings.Contains(section, want) {
			t.Errorf("the coordinated omission section lacks %q:\n%s", want, section)
		}
	}
}

// TestInterruptDuringStall: Ctrl-C while the managed server is stopped
// ends the run promptly, and nothing is left: no stopped server, no
// process, no data dir.
func TestInterruptDuringStall(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	p := testkit.Start(t, exec.Command(testkit.Binary(t), "run", "hotkey", "--stores", "redis", "--clients", "2", "--duration", "20s", "--stall", "1s:15s",
		"--out", out, "--data-dir", data, "--quiet"))
	pid := 0
	if !testkit.WaitFor(30*time.Second, 10*time.Millisecond, func() bool {
		if r := partialResult(out); r != nil && len(r.Targets) == 1 {
			pid = r.Targets[0].ServerPID
		}
		return pid != 0 && testkit.ProcState(pid) == "T"
	}) {
		t.Fatalf("the server (pid %d) was never stopped\nstderr: %s", pid, p.Stderr)
	}
	start := time.Now()
	p.Signal(t, syscall.SIGINT)
	if code := p.WaitExit(t, time.Minute); code != 1 {
		t.Errorf("exit code %d after SIGINT, want 1\nstderr: %s", code, p.Stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to exit after SIGINT during a stall", d)
	}
	if st := testkit.ProcState(pid); st != "" {
		t.Errorf("server pid %d left in state %s", pid, st)
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}
