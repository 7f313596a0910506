package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server/servertest"
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
	cmd := exec.Command(bin, "run", scenario, "--out", out, "--data-dir", data, "--quiet")
	var se strings.Builder
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Wait for the mount, then for a few trials' cuts and remounts.
	deadline := time.Now().Add(60 * time.Second)
	for len(mountsUnder(t, data)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no power-cut mount under %s in 60 s\nstderr: %s", data, se.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("exit after Ctrl-C: %v, want exit code 1\nstderr: %s", err, se.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("storebench did not exit within 45 s of Ctrl-C\nstderr: %s", se.String())
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
		if strings.HasPrefix(string(cmdline), bin+"\x00") && strings.Contains(string(cmdline), durability.ChildArg) {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}
