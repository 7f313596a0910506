package server_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// TestPausePostgres: Pause stops the postmaster and every backend (each
// leads a process group of its own), Resume continues them all, and Stop of
// a paused server is prompt: it must not wait out StopGrace.
func TestPausePostgres(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Postgres, server.Options{})
	pids := s.PIDs()
	if len(pids) < 2 {
		t.Fatalf("postgres has %d processes, want the postmaster and its children", len(pids))
	}
	what, err := s.Pause()
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("postgres pid %d and its", s.PID); !strings.Contains(what, want) {
		t.Errorf("Pause says %q, want it to name %s", what, want)
	}
	// Signals are delivered asynchronously; a process that exited meanwhile
	// (a short-lived worker: gone, or a zombie its stopped parent cannot
	// reap) counts as neither.
	if bad := waitStates(pids, func(st string) bool { return st == "T" || st == "" || st == "Z" || st == "X" }); len(bad) > 0 {
		t.Errorf("not stopped after Pause: %v", bad)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if bad := waitStates(pids, func(st string) bool { return st != "T" }); len(bad) > 0 {
		t.Errorf("still stopped after Resume: %v", bad)
	}
	if _, err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > server.StopGrace/2 {
		t.Errorf("Stop of a paused server took %v", d)
	}
	for _, pid := range pids {
		if testkit.Alive(pid) {
			t.Errorf("pid %d alive after Stop", pid)
		}
	}
	if _, err := s.Pause(); err == nil {
		t.Error("Pause of a stopped server succeeded")
	}
	if err := s.Resume(); err != nil {
		t.Errorf("Resume of a stopped server: %v", err)
	}
}

// waitStates waits up to a second for every pid's state to satisfy ok and
// returns those that do not ("pid:state").
func waitStates(pids []int, ok func(string) bool) []string {
	var bad []string
	testkit.WaitFor(time.Second, 10*time.Millisecond, func() bool {
		bad = bad[:0]
		for _, pid := range pids {
			if st := testkit.ProcState(pid); !ok(st) {
				bad = append(bad, fmt.Sprintf("%d:%s", pid, st))
			}
		}
		return len(bad) == 0
	})
	return bad
}

// TestPauseReturnsStopped: when Pause returns, every thread of a
// multi-threaded server has stopped, so a request sent next cannot be
// answered. SIGSTOP alone does not promise that: kill(2) returns before a
// thread running on the other CPU has stopped.
func TestPauseReturnsStopped(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Memcached, server.Options{})
	t.Cleanup(func() { s.Resume() })
	for i := range 30 {
		if _, err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		if running := runningThreads(s.PID); len(running) > 0 {
			t.Fatalf("pause %d: threads not stopped when Pause returned: %v", i, running)
		}
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
	}
}

// runningThreads lists pid's threads that are not stopped ("tid:state").
func runningThreads(pid int) []string {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []string
	for _, task := range tasks {
		// /proc/TID is the thread's, though /proc does not list it.
		tid, _ := strconv.Atoi(task.Name())
		if st := testkit.ProcState(tid); st != "" && st != "T" && st != "t" {
			out = append(out, task.Name()+":"+st)
		}
	}
	return out
}
