// Package doctor measures what the machine itself does to a latency figure
// before a store is blamed for it: how late an idle CPU wakes, what a
// loopback round trip costs on one CPU and across two, how much the
// hypervisor steals, and the settings that move those (CPU quota, timer
// slack, frequency governor, transparent huge pages). Each check says what
// it means for the SLOs one can measure here and what helps.
package doctor

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/hiccup"
)

// Check is one finding: what was looked at, what was found, what it means
// for a measurement on this machine, and what would help (empty when
// nothing needs to).
type Check struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Meaning string `json:"meaning,omitempty"`
	Help    string `json:"help,omitempty"`
}

// Report is every check, with the figures a verdict can be judged by.
type Report struct {
	Checks []Check `json:"checks"`
	// IdleWake is the idle-CPU wake-up lateness over all CPUs (the probes
	// sleeping IdleInterval between wake-ups), µs.
	IdleWake     hiccup.Figures `json:"idle_wake"`
	IdleInterval string         `json:"idle_interval"`
	// TickWake is the lateness of a wake-up every millisecond (cyclictest's
	// default cadence), µs.
	TickWake hiccup.Figures `json:"tick_wake"`
	// RTTSameCPU and RTTAcrossCPUs are loopback TCP round trips of one byte,
	// both ends blocking in the kernel (no runtime in between), µs.
	RTTSameCPU    *RoundTrips `json:"rtt_same_cpu,omitempty"`
	RTTAcrossCPUs *RoundTrips `json:"rtt_across_cpus,omitempty"`
	// StealPct is the share of CPU time the hypervisor took during the
	// checks, from /proc/stat.
	StealPct float64 `json:"steal_pct"`
}

// RoundTrips are a ping-pong's round-trip times, µs.
type RoundTrips struct {
	CPUs  [2]int  `json:"cpus"`
	N     int     `json:"n"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	Max   float64 `json:"max_us"`
	Error string  `json:"error,omitempty"`
}

// Options say how long to look: Brief is the short check a run makes
// before a capacity search (about 2 s), otherwise about 8 s.
type Options struct {
	Brief bool
}

// Run makes every check. It fails only when the context ends; a check that
// cannot be made here says so in its value.
func Run(ctx context.Context, o Options) (*Report, error) {
	idleFor, tickFor, pings := 4*time.Second, 2*time.Second, 2000
	if o.Brief {
		idleFor, tickFor, pings = time.Second, 500*time.Millisecond, 500
	}
	r := &Report{}
	stealBefore, stealErr := hiccup.ReadCPUTimes()
	r.Checks = append(r.Checks, cpuChecks()...)

	const idleInterval = 20 * time.Millisecond
	r.IdleInterval = idleInterval.String()
	idle, err := wakeUps(ctx, idleInterval, idleFor)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.Checks = append(r.Checks, Check{Name: "idle CPU wake-up", Value: "not measured: " + err.Error()})
	} else {
		r.IdleWake = idle
		r.Checks = append(r.Checks, wakeCheck("idle CPU wake-up", fmt.Sprintf("after %v asleep", idleInterval), idle))
	}
	tick, err := wakeUps(ctx, time.Millisecond, tickFor)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.Checks = append(r.Checks, Check{Name: "wake-up every 1 ms", Value: "not measured: " + err.Error()})
	} else {
		r.TickWake = tick
		r.Checks = append(r.Checks, wakeCheck("wake-up every 1 ms", "cyclictest's cadence", tick))
	}

	cpus := allowedCPUs()
	r.RTTSameCPU = pingPong(ctx, [2]int{cpus[0], cpus[0]}, pings)
	if len(cpus) > 1 {
		r.RTTAcrossCPUs = pingPong(ctx, [2]int{cpus[0], cpus[len(cpus)-1]}, pings)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.Checks = append(r.Checks, rttChecks(r.RTTSameCPU, r.RTTAcrossCPUs, r.IdleWake)...)

	if stealAfter, err := hiccup.ReadCPUTimes(); err == nil && stealErr == nil {
		r.StealPct = stealAfter.StealPctSince(stealBefore)
		r.Checks = append(r.Checks, stealCheck(r.StealPct))
	} else {
		r.Checks = append(r.Checks, Check{Name: "steal time", Value: "not readable here (/proc/stat)"})
	}
	r.Checks = append(r.Checks, settingChecks()...)
	return r, nil
}

// wakeUps runs the hiccup meter on every CPU for d, with nothing else of
// ours running: the machine's own wake-up lateness.
func wakeUps(ctx context.Context, interval, d time.Duration) (hiccup.Figures, error) {
	m, err := hiccup.Start(nil, interval)
	if err != nil {
		return hiccup.Figures{}, err
	}
	defer m.Stop()
	select {
	case <-ctx.Done():
		return hiccup.Figures{}, ctx.Err()
	case <-time.After(d):
	}
	w, err := m.Window()
	return w.All, err
}

// wakeCheck says what a wake-up lateness means for a percentile SLO: a
// request that waits for a CPU to wake carries the lateness in its latency,
// so an SLO within a few times of it measures the machine.
func wakeCheck(name, how string, f hiccup.Figures) Check {
	c := Check{Name: name, Value: fmt.Sprintf("%s: p50 %s, p99 %s, max %s late (%d wake-ups)", how, us(f.P50), us(f.P99), us(f.Max), f.Wakes)}
	switch {
	case f.P99 >= 1000:
		c.Meaning = fmt.Sprintf("a request that waits on an idle CPU can take %s more: p99 SLOs under ~%s measure this machine, not the store", us(f.P99), us(2*f.P99))
		c.Help = "keep the CPUs from idling (a busy loop at nice 19 on each), pin client and server to one CPU, or use a machine kind with dedicated cores"
	case f.Max >= 1000:
		c.Meaning = fmt.Sprintf("rare wake-ups as late as %s: a p99.9 or max under ~%s measures this machine", us(f.Max), us(2*f.Max))
	default:
		c.Meaning = "wake-ups are prompt: sub-millisecond SLOs are measurable here"
	}
	return c
}

func us(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.1f ms", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0f µs", v)
	default:
		return fmt.Sprintf("%.1f µs", v)
	}
}

func rttChecks(same, across *RoundTrips, idle hiccup.Figures) []Check {
	var out []Check
	for _, r := range []*RoundTrips{same, across} {
		if r == nil {
			continue
		}
		name := fmt.Sprintf("loopback round trip, CPUs %d and %d", r.CPUs[0], r.CPUs[1])
		if r.Error != "" {
			out = append(out, Check{Name: name, Value: "not measured: " + r.Error})
			continue
		}
		out = append(out, Check{Name: name, Value: fmt.Sprintf("p50 %s, p99 %s, max %s (%d round trips, one byte, blocking sockets)", us(r.P50), us(r.P99), us(r.Max), r.N),
			Meaning: fmt.Sprintf("no store on this machine answers a request in under ~%s: the floor of every p50", us(r.P50))})
	}
	if same != nil && across != nil && same.Error == "" && across.Error == "" {
		c := Check{Name: "--client-cpus / --server-cpus here"}
		switch {
		case across.P50 > 1.5*same.P50:
			c.Value = fmt.Sprintf("separate CPUs cost %s per round trip against %s on one: each side's CPU idles between requests and must wake", us(across.P50), us(same.P50))
			c.Meaning = "pinning client and server apart lowers throughput at low load and adds the idle wake-up to the tail"
			c.Help = "pin both to one CPU for latency at low rates (--server-cpus 0 --client-cpus 0), apart for throughput at high rates"
		default:
			c.Value = fmt.Sprintf("one CPU %s, across CPUs %s: about the same", us(same.P50), us(across.P50))
			c.Meaning = "pinning apart costs no round-trip time here"
		}
		if idle.P99 >= 1000 {
			c.Help = strings.TrimSpace(c.Help + "; at low rates an idle CPU's late wake-up dominates the tail whatever the pinning")
		}
		out = append(out, c)
	}
	return out
}

func stealCheck(pct float64) Check {
	c := Check{Name: "steal time", Value: fmt.Sprintf("%.1f%% of CPU time during the checks", pct)}
	switch {
	case pct >= 1:
		c.Meaning = "the hypervisor takes CPU from this VM: throughput and tails vary with its neighbours"
		c.Help = "repeat runs (--repeat) and compare their spread; a dedicated-core machine kind avoids it"
	case pct >= 0.1:
		c.Meaning = "the hypervisor took a little CPU: runs may differ by about that much"
	default:
		c.Meaning = "the hypervisor took no measurable CPU"
	}
	return c
}

// cpuChecks are the CPU's model and count and the CPUs this process may use.
func cpuChecks() []Check {
	model := cpuModel()
	allowed := allowedCPUs()
	c := Check{Name: "CPUs", Value: fmt.Sprintf("%d × %s; this process may use %d (%v)", runtime.NumCPU(), model, len(allowed), allowed)}
	if len(allowed) <= 2 {
		c.Meaning = "client and server share at most two CPUs: client CPU per op counts against the store's"
	}
	return []Check{c}
}

// allowedCPUs are the CPUs this process may use, or every CPU where the
// platform cannot say.
func allowedCPUs() []int {
	if cpus, err := hiccup.AllowedCPUs(); err == nil && len(cpus) > 0 {
		return cpus
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}
