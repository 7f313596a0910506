//go:build linux

package target

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestPlacementProbe pins this process and a managed Redis to chosen CPUs,
// runs a short phase through the instance's probe, and checks the phase
// records where both really ran.
func TestPlacementProbe(t *testing.T) {
	if n := runtime.NumCPU(); n < 2 {
		t.Fatalf("this test pins client and server to CPUs 0 and 1; this machine has %d CPU", n)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		client, server int
	}{
		{"shared", 0, 0},
		{"apart", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := servertest.Start(t, server.Redis, server.Options{Profile: "none", CPUs: strconv.Itoa(tc.server)})
			st, err := redis.New(ctx, redis.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close(ctx) })
			c, err := st.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			inst := &Instance{Spec: Spec{Store: "redis"}, Store: st, Server: srv}

			pinSelf(t, tc.client)
			w := &kvWorker{kv: c.(store.KV), keys: 100}
			p, err := load.Run(ctx, load.Config{Workers: 1, Duration: time.Second, Warmup: 100 * time.Millisecond, Name: "get", Probe: inst.Probe("get")}, []load.Worker{w})
			if err != nil {
				t.Fatal(err)
			}
			pl := p.Placement
			if pl == nil {
				t.Fatalf("no placement recorded (%d ops, warnings %q)", p.Ops, p.Warnings)
			}
			t.Logf("%s: p50 %.1f µs, %.0f ops/s; placement %+v", tc.name, p.LatencyUs.P50, p.ThroughputOpsS, *pl)
			if pl.Client[tc.client] < 0.9 || pl.Server[tc.server] < 0.9 {
				t.Errorf("client on CPU %d %.3f, server on CPU %d %.3f; want both >= 0.9 where pinned", tc.client, pl.Client[tc.client], tc.server, pl.Server[tc.server])
			}
			if shared := tc.client == tc.server; shared && pl.SameCPU < 0.9 || !shared && pl.SameCPU > 0.1 {
				t.Errorf("same_cpu %.3f; want >= 0.9 when pinned together, <= 0.1 when apart", pl.SameCPU)
			}
			if pl.Samples < 4 {
				t.Errorf("%d samples over a 1 s phase, want about %d", pl.Samples, time.Second/metrics.PlacementInterval)
			}
		})
	}
}

// pinSelf pins every thread of this process to cpu (threads created later
// inherit it) and restores the current affinity when the test ends.
func pinSelf(t *testing.T, cpu int) {
	t.Helper()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	set.Set(cpu)
	setAll := func(s *unix.CPUSet) error {
		tasks, err := filepath.Glob("/proc/self/task/*")
		if err != nil {
			return err
		}
		for _, task := range tasks {
			tid, _ := strconv.Atoi(filepath.Base(task))
			if err := unix.SchedSetaffinity(tid, s); err != nil && !os.IsNotExist(err) && err != unix.ESRCH {
				return err
			}
		}
		return nil
	}
	t.Cleanup(func() {
		if err := setAll(&old); err != nil {
			t.Errorf("restore CPU affinity: %v", err)
		}
	})
	if err := setAll(&set); err != nil {
		t.Fatalf("pin to CPU %d: %v", cpu, err)
	}
}
