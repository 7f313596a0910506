package report

import (
	"fmt"
	"strconv"

	"github.com/storebench/storebench/internal/hiccup"

	"github.com/storebench/storebench/internal/result"
)

// newPlatformModel builds the "platform stalls" section of every format:
// for each phase the hiccup meter watched (Phase.Hiccup), how late a probe
// thread on each CPU the run used woke from 1 ms sleeps, beside the phase's
// own p99 and the ops the open loop started late, so a tail can be read
// against what the machine did to any thread at the time. nil when no
// phase was watched (--no-hiccup, or not Linux).
func newPlatformModel(r *result.Result) *tableSection {
	t := newTable("platform", "platform stalls: how late a thread on each CPU woke from 1 ms sleeps over the phase (µs), beside the phase's own p99", true,
		column{head: "cell", left: true}, column{head: "phase", left: true},
		column{head: "CPUs", m: "hiccup_cpus"}, column{head: "wake-ups", m: "hiccup_wakes"},
		column{head: "stall p50", m: "hiccup_p50_us"}, column{head: "stall p99", m: "hiccup_p99_us"},
		column{head: "stall p99.9", m: "hiccup_p99_9_us"}, column{head: "stall max", m: "hiccup_max_us"},
		column{head: "stalled ms", m: "hiccup_stalled_ms"}, column{head: burstHead, m: "hiccup_burst_ms"},
		column{head: "speed loop ns", m: "hiccup_speed_ns"},
		column{head: "phase p99", m: "latency_p99_us"},
		column{head: "late starts", m: "open_loop_late_ops"})
	for c, p := range phasesInOrder(r) {
		h := p.Hiccup
		if h == nil || h.All.Wakes == 0 {
			continue
		}
		late := textCell("—")
		if p.OpenLoop != nil {
			late = countCell(p.OpenLoop.LateOps)
		}
		t.add(textCell(c.Label()), textCell(p.Name),
			textCell(strconv.Itoa(len(h.PerCPU))), countCell(h.All.Wakes),
			figureCell(num(h.All.P50), h.All.P50), figureCell(num(h.All.P99), h.All.P99),
			figureCell(num(h.All.P999), h.All.P999), figureCell(num(h.All.Max), h.All.Max),
			figureCell(fixed(h.All.StalledMs, 1), h.All.StalledMs), burstCell(h.All.BurstMs), speedCell(h.All.SpeedNs),
			figureCell(num(p.LatencyUs.P99), p.LatencyUs.P99), late)
	}
	return newTableSection(t, platformNote, "platform stalls (µs a thread on each CPU woke late from 1 ms sleeps over the phase, beside the phase's own p99)")
}

// burstHead names the column of hiccup.BurstWindow's worst stalls.
var burstHead = fmt.Sprintf("worst %d ms", hiccup.BurstWindow.Milliseconds())

// platformNote says where the figures come from and how to read them.
var platformNote = "The hiccup meter (as jHiccup and cyclictest): a thread on every CPU the run used, outside the Go runtime, sleeps to absolute 1 ms deadlines and records how late it woke. A stall is what any thread, the client's or the server's, suffered at that moment: a hypervisor's steal, an idle virtual CPU's slow wake-up, another task. Stalled ms sums the wake-ups later than 1 ms; " + burstHead + " is the most one probe woke late, summed, within any such span (ms): a cluster of short stalls holds an op as one long one would. Speed loop ns is the median time of a fixed chain of multiply-adds each probe runs after waking: how fast the CPUs ran (storebench compare sets it beside a change). A phase p99 near the stall p99 measures the machine rather than the store; storebench doctor says what this machine does at rest. The probes' own CPU is left out of the client's. Off with --no-hiccup."

// burstCell is a probe's worst BurstWindow of stalls, "—" where not measured
// (results from before it).
func burstCell(ms float64) cell {
	if ms <= 0 {
		return textCell("—")
	}
	return figureCell(fixed(ms, 1), ms)
}

// speedCell is a speed loop's median ns, "—" where it was not measured
// (results from before it).
func speedCell(ns float64) cell {
	if ns <= 0 {
		return textCell("—")
	}
	return figureCell(fixed(ns, 0), ns)
}
