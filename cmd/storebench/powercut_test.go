package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
	"github.com/storebench/storebench/internal/workload/durability"
)

// TestInterruptDuringPowerCut: Ctrl-C while a power-cut cell of SQLite is
// cutting, remounting and writing through its trials leaves no mount, no
// writer process and nothing in the data dir.
func TestInterruptDuringPowerCut(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	scenario := filepath.Join(t.TempDir(), "cut.yaml")
	body := "name: cut-interrupted\ntargets:\n  - {name: sqlite-full, store: sqlite, options: {synchronous: FULL}}\n" +
		"workloads:\n  - type: durability\n    durability: {trials: 200, min_acked: 200, kill_window: 100ms, fault: power}\nload:\n  clients: 2\n"
	if err := os.WriteFile(scenario, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testkit.Start(t, exec.Command(testkit.Binary(t), "run", scenario, "--out", out, "--data-dir", data, "--quiet"))

	// Wait for the mount, then for a few trials' cuts and remounts.
	if !testkit.WaitFor(60*time.Second, 20*time.Millisecond, func() bool { return len(mountsUnder(t, data)) > 0 }) {
		t.Fatalf("no power-cut mount under %s in 60 s\nstderr: %s", data, p.Stderr)
	}
	time.Sleep(3 * time.Second)
	p.Signal(t, syscall.SIGINT)
	if code := p.WaitExit(t, 45*time.Second); code != 1 {
		t.Errorf("exit code %d after Ctrl-C, want 1\nstderr: %s", code, p.Stderr)
	}
	if m := mountsUnder(t, data); len(m) > 0 {
		t.Errorf("still mounted after Ctrl-C: %v", m)
	}
	if w := writers(t); len(w) > 0 {
		t.Errorf("writer processes still running after Ctrl-C: %v", w)
	}
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		t.Errorf("left behind in the data dir: %s", e.Name())
	}
}

// mountsUnder lists the mountpoints under dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

// writers lists the durability writer processes of this test's binary.
func writers(t *testing.T) []string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, p := range procs {
		cmdline, _ := os.ReadFile(p + "/cmdline")
		if strings.HasPrefix(string(cmdline), testkit.Binary(t)+"\x00") && strings.Contains(string(cmdline), durability.ChildArg) {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}
