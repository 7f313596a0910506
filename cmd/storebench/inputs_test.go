package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unwritableDirs are directories in which nobody, root included, can
// make a directory, by name: an immutable one (chattr +i, where the
// filesystem has it), sysfs, and for anyone but root one without write
// permission (which does not stop root). Each is checked to refuse a
// mkdir here, so that a case is never one that would pass anyway.
func unwritableDirs(t *testing.T) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	refuses := func(dir string) bool {
		probe, err := os.MkdirTemp(dir, "probe-*")
		if err == nil {
			os.Remove(probe)
		}
		return err != nil
	}
	immutable := t.TempDir()
	if exec.Command("chattr", "+i", immutable).Run() == nil {
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", immutable).Run() })
		dirs["immutable"] = immutable
	}
	if os.Geteuid() != 0 {
		readOnly := t.TempDir()
		if err := os.Chmod(readOnly, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(readOnly, 0o755) })
		dirs["no write permission"] = readOnly
	}
	if st, err := os.Stat("/sys"); err == nil && st.IsDir() {
		dirs["sysfs"] = "/sys"
	}
	for name, dir := range dirs {
		if !refuses(dir) {
			t.Logf("%s: %s takes a new directory here; not a case", name, dir)
			delete(dirs, name)
		}
	}
	if len(dirs) == 0 && runtime.GOOS == "linux" {
		t.Fatal("no directory refuses a mkdir here (no chattr +i, no /sys)")
	}
	return dirs
}

// TestUnwritableDataDir: a --data-dir in which the run cannot make its
// scratch dir is refused in one line, exit 2, and leaves no result behind
// (it left one saying "running", which report rendered as "no cell
// finished").
func TestUnwritableDataDir(t *testing.T) {
	for name, dir := range unwritableDirs(t) {
		for _, st := range []string{"files", "sqlite", "memory"} {
			t.Run(name+"/"+st, func(t *testing.T) {
				refusesBadInput(t, nil, []string{"run", "kv", "--stores", st, "--keys", "10", "--data-dir", dir},
					[]string{"--data-dir " + dir + ": "})
			})
		}
	}
}

// TestScenarioIsARegularFile: run reads a scenario from a regular file of
// at most 1 MiB; anything else is refused in one line, exit 2, at once.
// /dev/zero ran storebench out of memory, and a FIFO nobody writes held it
// in open(2), where SIGTERM did not end it.
func TestScenarioIsARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	head := "name: big\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10]}\n#"
	if err := os.WriteFile(big, []byte(head+strings.Repeat("x", 1<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "scenario " + fifo + ": a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "scenario /dev/zero: a character device, not a regular file"},
		{dir + "/", "scenario " + dir + "/: a directory, not a regular file"},
		{big, "scenario " + big + ": larger than 1 MiB, the most storebench reads"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			// Were the FIFO opened to be read, a writer that comes later
			// ends the wait: the test fails on its time, it does not hang.
			release := time.AfterFunc(10*time.Second, func() {
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			defer release.Stop()
			refusesBadInput(t, nil, []string{"run", tc.path}, []string{tc.want})
		})
	}
}
