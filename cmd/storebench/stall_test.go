package main

import (
	"bytes"
	"errors"
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
)

// procState is the state letter of /proc/PID/stat ("T": stopped), "" if gone.
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

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
	cmd := exec.Command(bin, "run", "coordinated-omission", "--quick", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	pid, checked := 0, false
	timeout := time.After(2 * time.Minute)
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v\nstdout: %s\nstderr: %s", err, so.String(), se.String())
			}
			break wait
		case <-timeout:
			t.Fatalf("the quick suite took over 2 minutes\nstderr: %s", se.String())
		case <-time.After(20 * time.Millisecond):
		}
		if checked {
			continue
		}
		if r := partialResult(out); r != nil && len(r.Cells) >= 2 && len(r.Cells) < 4 && len(r.Targets) == 1 {
			pid = r.Targets[0].ServerPID
			if st := procState(pid); st == "" || st == "T" {
				t.Errorf("after the stalled cells, the server (pid %d) is in state %q, want running", pid, st)
			}
			checked = true
		}
	}
	if !checked {
		t.Fatal("the run ended before the server could be checked between cells")
	}
	if procState(pid) != "" {
		t.Errorf("server pid %d still exists after the run (state %s)", pid, procState(pid))
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

	text := so.String()
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
	cmd := exec.Command(bin, "run", "hotkey", "--stores", "redis", "--clients", "2", "--duration", "20s", "--stall", "1s:15s",
		"--out", out, "--data-dir", data, "--quiet")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pid := 0
	for deadline := time.Now().Add(30 * time.Second); pid == 0 || procState(pid) != "T"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server (pid %d) was never stopped\nstderr: %s", pid, se.String())
		}
		if r := partialResult(out); r != nil && len(r.Targets) == 1 {
			pid = r.Targets[0].ServerPID
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit after SIGINT: %v, want code 1\nstderr: %s", err, se.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to exit after SIGINT during a stall", d)
	}
	if st := procState(pid); st != "" {
		t.Errorf("server pid %d left in state %s", pid, st)
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}
