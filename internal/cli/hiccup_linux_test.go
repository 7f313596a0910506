package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/result/capacity"
)

// TestHiccupBesideEveryPhase: every measured phase carries the hiccup
// meter's window (wake-ups counted on each CPU the run used, the probes'
// CPU out of the client's); --no-hiccup leaves it out.
func TestHiccupBesideEveryPhase(t *testing.T) {
	for _, off := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"run", "throughput", "--stores", "memory", "--duration", "300ms", "--clients", "2", "--out", out, "--quiet"}
		if off {
			args = append(args, "--no-hiccup")
		}
		var buf bytes.Buffer
		if code := netApp(&buf).Main(context.Background(), args); code != ExitOK {
			t.Fatalf("exit %d\n%s", code, buf.String())
		}
		for _, c := range readOnlyResult(t, out).Cells {
			for _, p := range c.Phases {
				switch h := p.Hiccup; {
				case off && h != nil:
					t.Errorf("--no-hiccup: %s %s has %+v", c.ID, p.Name, h)
				case !off && (h == nil || h.All.Wakes < 100 || len(h.PerCPU) != runtime.NumCPU() || h.ProbeCPUS <= 0):
					t.Errorf("%s %s: hiccup %+v", c.ID, p.Name, h)
				}
			}
		}
	}
}

// burstAllCPUs keeps every CPU busy at real-time priority for on, every
// on+off, until stop is closed: a known platform stall for every normal
// thread (skips the test where real-time priority is not allowed).
func burstAllCPUs(t *testing.T, on, off time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errc := make(chan error, runtime.NumCPU())
	for cpu := range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the real-time thread exits with the goroutine
			var set unix.CPUSet
			set.Set(cpu)
			err := unix.SchedSetaffinity(0, &set)
			if err == nil {
				err = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0)
			}
			errc <- err
			if err != nil {
				return
			}
			for {
				select {
				case <-done:
					return
				case <-time.After(off):
				}
				for end := time.Now().Add(on); time.Now().Before(end); {
				}
			}
		}()
	}
	for range runtime.NumCPU() {
		if err := <-errc; err != nil {
			close(done)
			wg.Wait()
			if errors.Is(err, unix.EPERM) {
				t.Fatal("a real-time busy loop needs CAP_SYS_NICE: run the tests as root (sudo make test): ", err)
			}
			t.Fatal(err)
		}
	}
	return func() { close(done); wg.Wait() }
}

// TestCapacityNamesPlatformStalls: with every CPU taken away for 15 ms in
// every 60 by a real-time busy loop, the hiccup meter beside each step
// sees stalls of about that size, and the capacity verdict of a memory
// store at p99 ≤ 1 ms names platform stalls as its limiter, in its reason.
func TestCapacityNamesPlatformStalls(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "stalls.yaml")
	scenario := "name: stalls\ntargets: [memory]\nworkloads:\n  - type: capacity\n    keyspace: 1000\n    slo: [\"p99<=1ms\"]\n" +
		"    start_rate: 2000\n    min_step: 1s\n    max_step: 1s\n    max_steps: 3\nload:\n  clients: 2\n"
	if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	const stall = 15 * time.Millisecond
	stop := burstAllCPUs(t, stall, 45*time.Millisecond)
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", file, "--out", out, "--quiet"})
	stop()
	if code != ExitOK && code != ExitFailed {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	c := readOnlyResult(t, out).Cells[0]
	if c.Capacity == nil || len(c.Capacity.Capacity) != 1 || len(c.Capacity.Steps) == 0 {
		t.Fatalf("no capacity in %+v\n%s", c, buf.String())
	}
	for _, st := range c.Capacity.Steps {
		// At least the injected stall (other load on the machine may add).
		if got := time.Duration(st.HiccupMaxUs * 1e3); got < stall/2 {
			t.Errorf("step at %.0f ops/s: platform stalls up to %v, want the injected %v seen", st.OfferedOpsS, got, stall)
		}
	}
	cp := c.Capacity.Capacity[0]
	if cp.Limiter != capacity.LimiterPlatform || !strings.Contains(cp.Reason, "this SLO measures the machine") {
		t.Errorf("capacity %+v: want platform stalls named as the limiter", cp)
	}
}
