package doctor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown model"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown model"
}

// pingPong measures n loopback TCP round trips of one byte between a
// thread on cpus[0] and one on cpus[1], both blocking in read(2) as a C
// client and server would: the machine's floor for any request.
func pingPong(ctx context.Context, cpus [2]int, n int) *RoundTrips {
	r := &RoundTrips{CPUs: cpus}
	rtts, err := pingPongRaw(ctx, cpus, n)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	slices.Sort(rtts)
	at := func(q float64) float64 { return float64(rtts[min(len(rtts)-1, int(q*float64(len(rtts))))]) / 1e3 }
	r.N, r.P50, r.P99, r.Max = len(rtts), at(0.5), at(0.99), float64(rtts[len(rtts)-1])/1e3
	return r
}

func pingPongRaw(ctx context.Context, cpus [2]int, n int) ([]time.Duration, error) {
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return nil, err
	}
	if err := unix.Listen(ln, 1); err != nil {
		return nil, err
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		return nil, err
	}
	// A stuck peer ends the check instead of hanging it.
	timeout := unix.NsecToTimeval(int64(2 * time.Second))
	served := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
		served <- serveEcho(ln, cpus[0], &timeout)
	}()
	type answer struct {
		rtts []time.Duration
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
		rtts, err := ping(ctx, sa, cpus[1], n, &timeout)
		done <- answer{rtts, err}
	}()
	a := <-done
	if err := <-served; a.err == nil && err != nil {
		a.err = err
	}
	return a.rtts, a.err
}

func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

func serveEcho(ln, cpu int, timeout *unix.Timeval) error {
	if err := pinThread(cpu); err != nil {
		return err
	}
	if err := unix.SetsockoptTimeval(ln, unix.SOL_SOCKET, unix.SO_RCVTIMEO, timeout); err != nil {
		return err
	}
	fd, _, err := unix.Accept(ln)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, timeout); err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b := make([]byte, 1)
	for {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return err
		}
		if _, err := unix.Write(fd, b); err != nil {
			return err
		}
	}
}

func ping(ctx context.Context, sa unix.Sockaddr, cpu, n int, timeout *unix.Timeval) ([]time.Duration, error) {
	if err := pinThread(cpu); err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, timeout); err != nil {
		return nil, err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	const warmup = 100
	rtts := make([]time.Duration, 0, n)
	b := []byte{'x'}
	for i := range n + warmup {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		start := time.Now()
		if _, err := unix.Write(fd, b); err != nil {
			return nil, err
		}
		for {
			m, err := unix.Read(fd, b)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read: %w", err)
			}
			if m == 0 {
				return nil, errors.New("the echo side closed")
			}
			break
		}
		if i >= warmup {
			rtts = append(rtts, time.Since(start))
		}
	}
	return rtts, nil
}

// settingChecks are the settings that move latency: the cgroup's CPU
// quota, timer slack, the frequency governor and turbo, transparent huge
// pages.
func settingChecks() []Check {
	var out []Check
	out = append(out, quotaCheck())
	if slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		c := Check{Name: "timer slack", Value: fmt.Sprintf("%d ns", slack)}
		if slack >= 50000 {
			c.Meaning = fmt.Sprintf("a sleeping thread may wake up to %s late by design (the kernel batches timers)", us(float64(slack)/1e3))
		}
		out = append(out, c)
	}
	gov := readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	c := Check{Name: "frequency governor", Value: orNotReadable(gov, "not readable (a VM usually hides it)")}
	if gov == "powersave" || gov == "ondemand" || gov == "schedutil" {
		c.Meaning = "the CPU slows down when idle and speeds up under load: low-rate latencies read higher than high-rate ones"
		c.Help = "set the performance governor for measurements (cpupower frequency-set -g performance)"
	}
	out = append(out, c)
	turbo := "not readable"
	if v := readTrim("/sys/devices/system/cpu/intel_pstate/no_turbo"); v != "" {
		turbo = map[string]string{"0": "on", "1": "off"}[v]
	} else if v := readTrim("/sys/devices/system/cpu/cpufreq/boost"); v != "" {
		turbo = map[string]string{"0": "off", "1": "on"}[v]
	}
	tc := Check{Name: "turbo / boost", Value: turbo}
	if turbo == "on" {
		tc.Meaning = "the clock depends on temperature and on how many cores are busy: runs vary with it"
	}
	out = append(out, tc)
	thp := readTrim("/sys/kernel/mm/transparent_hugepage/enabled")
	th := Check{Name: "transparent huge pages", Value: orNotReadable(thp, "not readable")}
	if strings.Contains(thp, "[always]") {
		th.Meaning = "Redis warns of latency spikes from huge-page compaction with THP always"
		th.Help = "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"
	}
	out = append(out, th)
	return out
}

// quotaCheck reads the cgroup v2 CPU quota (cpu.max) of this process's
// cgroup, or v1's cfs quota.
func quotaCheck() Check {
	c := Check{Name: "cgroup CPU quota"}
	cg := "/"
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				cg = rest
			}
		}
	}
	if v := readTrim("/sys/fs/cgroup" + cg + "/cpu.max"); v != "" {
		quota, period, _ := strings.Cut(v, " ")
		if quota == "max" {
			c.Value = "none (cpu.max " + v + ")"
			return c
		}
		q, err1 := strconv.ParseFloat(quota, 64)
		p, err2 := strconv.ParseFloat(period, 64)
		if err1 == nil && err2 == nil && p > 0 {
			c.Value = fmt.Sprintf("%.2f CPUs (cpu.max %s)", q/p, v)
			c.Meaning = fmt.Sprintf("past %.2f CPUs the cgroup is throttled for the rest of each %s period: a stall of up to that long", q/p, us(p))
			c.Help = "give the container whole CPUs (a cpuset) or no quota while measuring"
			return c
		}
	}
	if v := readTrim("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); v != "" && v != "-1" {
		c.Value = "cfs_quota_us " + v
		c.Meaning = "the cgroup is throttled past its quota: stalls of up to one period"
		return c
	}
	c.Value = "none found"
	return c
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func orNotReadable(v, why string) string {
	if v == "" {
		return why
	}
	return v
}
