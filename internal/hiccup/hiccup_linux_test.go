package hiccup

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// burst keeps cpu busy at real-time priority for `on`, then lets it go for
// `off`, n times: a known stall for any normal thread on that CPU.
func burst(t *testing.T, cpu int, on, off time.Duration, n int) {
	t.Helper()
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the real-time thread exits with the goroutine
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- err
			return
		}
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
			errc <- err
			return
		}
		errc <- nil
		for range n {
			time.Sleep(off)
			for end := time.Now().Add(on); time.Now().Before(end); {
			}
		}
	}()
	if err := <-errc; err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Fatal("a real-time busy loop needs CAP_SYS_NICE: run the tests as root (sudo make test): ", err)
		}
		t.Fatal(err)
	}
	<-done
}

// startOnAll starts a meter on every CPU this process may use, stopped
// when the test ends, and names the last of them as the one to stall.
func startOnAll(t *testing.T) (m *Meter, cpus []int, victim int) {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil || len(cpus) == 0 {
		t.Fatalf("allowed CPUs %v: %v", cpus, err)
	}
	m, err = Start(cpus, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m, cpus, cpus[len(cpus)-1]
}

func cpuFigures(w Window, cpu int) Figures {
	for _, f := range w.PerCPU {
		if f.CPU == cpu {
			return f
		}
	}
	return Figures{}
}

// TestMeterSeesAnInjectedStall: a real-time busy loop that takes a CPU for
// 20 ms at a time makes the probe on that CPU wake about 20 ms late, each
// time.
func TestMeterSeesAnInjectedStall(t *testing.T) {
	m, cpus, victim := startOnAll(t)
	const stall = 20 * time.Millisecond
	burst(t, victim, stall, 80*time.Millisecond, 5)
	// The probe records the last stall when it wakes, just after the
	// burst: give it the moment, so the window holds every burst.
	time.Sleep(10 * time.Millisecond)
	w, err := m.Window()
	if err != nil {
		t.Fatal(err)
	}
	hit := cpuFigures(w, victim)
	t.Logf("window %.2fs: victim CPU %d %+v; all %+v", w.Seconds, victim, hit, w.All)
	// The probe wakes when the burst ends: up to one burst late, less the
	// part of an interval it was asleep anyway.
	if got := time.Duration(hit.Max * 1e3); got < stall*3/4 || got > 4*stall {
		t.Errorf("victim's worst wake-up %v late, want about the %v stall", got, stall)
	}
	if hit.StalledMs < 3*float64(stall.Milliseconds()) {
		t.Errorf("victim stalled %.1f ms in all, want about 5 × %v", hit.StalledMs, stall)
	}
	if w.All.Wakes < int64(w.Seconds*1000*float64(len(cpus))/3) {
		t.Errorf("%d wake-ups in %.2fs on %d CPUs: the probes are not waking every millisecond", w.All.Wakes, w.Seconds, len(cpus))
	}
	// 256 dependent multiply-adds are ≥ 4 cycles each: ≥ 170 ns even at
	// 6 GHz. Less means the loop was optimised away and times nothing but
	// the clock (~20-40 ns).
	for _, f := range append(w.PerCPU, w.All) {
		if f.SpeedNs < 150 || f.SpeedNs > 100_000 {
			t.Errorf("CPU %d: the speed loop's median %.0f ns, want 150 ns to 100 µs", f.CPU, f.SpeedNs)
		}
	}
	// A new window starts empty: right after, it holds a few wake-ups,
	// none of the bursts'.
	w2, _ := m.Window()
	if w2.All.Wakes > 20 || w2.All.StalledMs >= hit.StalledMs/2 {
		t.Errorf("the next window kept the stalls: %+v", w2.All)
	}
}

// TestMeterSumsAClusterOfStalls: 8 ms stalls 4 ms apart hold any thread
// on the CPU for about two thirds of each 50 ms, which the worst single
// wake-up (one stall) does not show and BurstMs does.
func TestMeterSumsAClusterOfStalls(t *testing.T) {
	m, _, victim := startOnAll(t)
	const stall, gap = 8 * time.Millisecond, 4 * time.Millisecond
	burst(t, victim, stall, gap, 10)
	time.Sleep(10 * time.Millisecond)
	w, err := m.Window()
	if err != nil {
		t.Fatal(err)
	}
	hit := cpuFigures(w, victim)
	t.Logf("victim CPU %d: max %.0f µs, burst %.1f ms in %v; all %+v", victim, hit.Max, hit.BurstMs, BurstWindow, w.All)
	if got := time.Duration(hit.Max * 1e3); got > 2*stall {
		t.Errorf("victim's worst wake-up %v late, want about one %v stall", got, stall)
	}
	// Four stalls end in any 50 ms (12 ms apart), each waking the probe
	// up to 8 ms late: ~30 ms; at least three of them, three quarters each.
	if hit.BurstMs < 3*0.75*float64(stall.Milliseconds()) || hit.BurstMs > float64(BurstWindow.Milliseconds()) {
		t.Errorf("victim's worst %v held %.1f ms of stalls, want about 4 × %v", BurstWindow, hit.BurstMs, stall)
	}
	if w.All.BurstMs != hit.BurstMs {
		t.Errorf("all probes' burst %.1f ms, want the worst CPU's %.1f", w.All.BurstMs, hit.BurstMs)
	}
}

// burstWindow keeps the largest lateness summed over BurstWindow: spans
// of interval + lateness, oldest dropped first.
func TestBurstWindow(t *testing.T) {
	const iv = time.Millisecond
	b := newBurstWindow(iv)
	for range 100 {
		b.add(10*time.Microsecond, iv) // 49 of these fit a window: 0.49 ms
	}
	if got := b.take(); got < 480*time.Microsecond || got > 500*time.Microsecond {
		t.Errorf("steady 10 µs wake-ups: worst %v, want ~490 µs", got)
	}
	for range 3 { // 3 × (1 ms + 9 ms) = 30 ms: all in one window with 20 steady ones
		b.add(9*time.Millisecond, iv)
	}
	if got := b.take(); got < 27*time.Millisecond || got > 28*time.Millisecond {
		t.Errorf("three 9 ms stalls: worst %v, want 27 ms and the few steady ones beside them", got)
	}
	for range 60 { // the stalls age out
		b.add(0, iv)
	}
	if got := b.take(); got < 27*time.Millisecond {
		t.Errorf("the worst of a window is kept until taken: %v", got)
	}
	if got := b.take(); got != 0 {
		t.Errorf("after the stalls left the window: worst %v, want 0", got)
	}
	b.add(time.Second, iv) // one stall longer than the window is its own burst
	if got := b.take(); got != time.Second {
		t.Errorf("one 1 s stall: worst %v", got)
	}
}

func TestStartRefusesAbsurdIntervals(t *testing.T) {
	for _, d := range []time.Duration{time.Microsecond, time.Minute} {
		if m, err := Start(nil, d); err == nil {
			m.Stop()
			t.Errorf("interval %v accepted", d)
		}
	}
	if _, err := Start([]int{4096}, 0); err == nil {
		t.Error("a probe on CPU 4096 started")
	}
}

// BenchmarkMeterCost: the CPU the probes take, per watched CPU, in
// microseconds of CPU per second of wall time (the cost a run pays for
// the meter; `go test -bench MeterCost ./internal/hiccup`).
func BenchmarkMeterCost(b *testing.B) {
	cpus, err := AllowedCPUs()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var before, after unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
		start := time.Now()
		m, err := Start(cpus, 0)
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second)
		w, err := m.Window()
		if err != nil {
			b.Fatal(err)
		}
		m.Stop()
		wall := time.Since(start)
		_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
		// The process's CPU (probes, the drain, the runtime) and the probe
		// threads' own, which a phase's client CPU leaves out.
		b.ReportMetric(float64(cpu.Microseconds())/wall.Seconds()/float64(len(cpus)), "cpu_us/s/cpu")
		b.ReportMetric(w.ProbeCPUS*1e6/w.Seconds/float64(len(cpus)), "probe_cpu_us/s/cpu")
	}
}

// ReadCPUTimes of every CPU is the aggregate line; of one CPU, a part of
// it; of a CPU that does not exist, an error.
func TestReadCPUTimes(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	all, err := ReadCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	one, err := ReadCPUTimes(cpus[0])
	if err != nil {
		t.Fatal(err)
	}
	if one.Total == 0 || one.Total > all.Total || one.Busy > one.Total {
		t.Errorf("CPU %d %+v, all %+v", cpus[0], one, all)
	}
	if _, err := ReadCPUTimes(1 << 20); err == nil {
		t.Error("a CPU that does not exist read")
	}
	if got := (CPUTimes{Busy: 300}).BusyCPUsSince(CPUTimes{Busy: 100}, 2); got != 1 {
		t.Errorf("200 ticks over 2 s: %v CPUs, want 1", got)
	}
}
