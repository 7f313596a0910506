package target

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/testkit"
)

// procState is pid's state letter ("T" when stopped); pid must exist.
func procState(t *testing.T, pid int) string {
	t.Helper()
	st := testkit.ProcState(pid)
	if st == "" {
		t.Fatalf("pid %d is gone", pid)
	}
	return st
}

// waitState waits up to a second for pid to be stopped (want true) or not.
func waitState(t *testing.T, pid int, stopped bool) {
	t.Helper()
	if !testkit.WaitFor(time.Second, 5*time.Millisecond, func() bool { return (procState(t, pid) == "T") == stopped }) {
		t.Fatalf("pid %d: state %s, want stopped=%v", pid, procState(t, pid), stopped)
	}
}

// TestStallProbe stalls a managed Redis inside a measured phase, and checks
// that every way out of the stall continues the server: its end, the
// phase's end, a cancelled run.
func TestStallProbe(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
	st, err := redis.New(ctx, redis.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	inst := &Instance{Spec: Spec{Store: "redis"}, Store: st, Server: srv}

	t.Run("through the engine", func(t *testing.T) {
		const workers = 2
		ws := make([]load.Worker, workers)
		for i := range ws {
			c, err := st.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			ws[i] = &kvWorker{kv: c.(store.KV), keys: 10}
		}
		stall := Stall{After: 300 * time.Millisecond, For: 300 * time.Millisecond}
		p, err := load.Run(ctx, load.Config{Workers: workers, Duration: time.Second, Name: "get", Probe: inst.StallProbe(ctx, stall, inst.Probe("get"))}, ws)
		if err != nil {
			t.Fatal(err)
		}
		if procState(t, srv.PID) == "T" {
			t.Fatal("the server is still stopped after the phase")
		}
		want := fmt.Sprintf("stall: SIGSTOP to redis pid %d (no child processes) 0.", srv.PID)
		if len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], want) || !strings.HasSuffix(p.Notes[0], "later") {
			t.Errorf("notes %q, want one starting %q", p.Notes, want)
		}
		if len(p.Warnings) > 0 {
			t.Errorf("warnings %q", p.Warnings)
		}
		// Both in-flight ops waited out the stall; the server-time probe
		// still read its counters after the SIGCONT.
		if p.LatencyUs.Max < 250e3 || p.ServerTime == nil || p.Server == nil {
			t.Errorf("max %v µs, server time %v, server cost %v", p.LatencyUs.Max, p.ServerTime, p.Server)
		}
	})

	t.Run("phase ends during the stall", func(t *testing.T) {
		pr := inst.StallProbe(ctx, Stall{For: time.Hour}, nil)
		pr.Begin()
		waitState(t, srv.PID, true)
		var ph metrics.Phase
		pr.End(&ph)
		if procState(t, srv.PID) == "T" {
			t.Fatal("still stopped after End")
		}
		if len(ph.Notes) != 1 || !strings.Contains(ph.Notes[0], "at the phase's end (asked for 1h0m0s)") {
			t.Errorf("notes %q", ph.Notes)
		}
	})

	t.Run("run interrupted during the stall", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		pr := inst.StallProbe(cctx, Stall{For: time.Hour}, nil)
		pr.Begin()
		waitState(t, srv.PID, true)
		cancel()
		waitState(t, srv.PID, false) // without waiting for End
		var ph metrics.Phase
		pr.End(&ph)
		if len(ph.Notes) != 1 || !strings.Contains(ph.Notes[0], "when the run was interrupted") {
			t.Errorf("notes %q", ph.Notes)
		}
	})

	t.Run("phase ends before the stall", func(t *testing.T) {
		pr := inst.StallProbe(ctx, Stall{After: time.Hour, For: time.Second}, nil)
		pr.Begin()
		var ph metrics.Phase
		pr.End(&ph)
		if want := "stall 1h0m0s:1s not done: the phase ended first"; !slices.Contains(ph.Warnings, want) || len(ph.Notes) > 0 {
			t.Errorf("warnings %q notes %q, want %q", ph.Warnings, ph.Notes, want)
		}
	})

	t.Run("no managed server", func(t *testing.T) {
		pr := (&Instance{Store: st}).StallProbe(ctx, Stall{For: time.Second}, nil)
		pr.Begin()
		var ph metrics.Phase
		pr.End(&ph)
		if len(ph.Warnings) != 1 || !strings.Contains(ph.Warnings[0], "no managed server") {
			t.Errorf("warnings %q", ph.Warnings)
		}
	})
}
