package capacity

import (
	"fmt"
	"github.com/storebench/storebench/internal/hiccup"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
)

// Verdict thresholds of a step.
const (
	// MinAchieved is the share of the offered rate a sustained step achieves.
	MinAchieved = 0.99
	// backlogNoiseShare is the backlog growth, as a share of the offered
	// rate per second, still counted as flat: 0.5% of the rate per second
	// (a step overloaded by 1% grows by 1% of the rate per second).
	backlogNoiseShare = 0.005
	// clientLateShare is the share of a step's ops the client may itself
	// start late (ClientLateOps) before the step counts as client-limited.
	clientLateShare = 0.01
)

// BacklogNoise describes how a backlog slope counts as flat, for the result.
const BacklogNoise = "slope over each phase's last half (least squares, one intercept per phase) <= max(2 standard errors of the slope, 0.5% of the offered rate per second, 1 op/s per connection)"

// measured accumulates the phases of one step: an extension adds a phase at
// the same rate, whose histogram and counts are merged in.
type measured struct {
	rate       float64
	hist       *hdr.Histogram
	ops, errs  int64
	durS       float64
	clientCPUS float64
	spinS      float64 // of clientCPUS, the engine's spin before intended starts
	serverCPUS float64
	serverSeen bool // every phase had a managed server's figures
	backlogs   [][]int64
	unsent     int64
	clientLate int64
	saturated  bool
	openLoop   bool // every phase had open-loop figures
	phases     []string
	// hiccup is the worst phase's platform stalls (wake-up lateness, µs) at
	// p50, p99, p99.9 and max; hiccupSeen says every phase had them.
	hiccup     [4]float64
	hiccupSeen bool
	// burstMs is the worst phase's most stall, summed, within
	// hiccup.BurstWindow.
	burstMs float64
	// speedNs is the slowest phase's CPU speed (the hiccup probes' speed
	// loop median, ns; higher is slower); 0 when none measured it.
	speedNs float64
	// machineBusyS is the whole machine's busy CPU time over the phases
	// (the hiccup windows'), machineS their seconds.
	machineBusyS, machineS float64
	// machineCPUs is how many CPUs the hiccup meter watched (the run's).
	machineCPUs int
	// sameCPU is the lowest share of the time client and server ran on
	// one CPU over the phases (metrics.Placement); -1 when not recorded.
	sameCPU float64
	// clientOn and serverOn are each side's CPU time per CPU over the
	// phases (placement's shares times the phase's CPU time), of which the
	// step's main-CPU shares are made; placed says every phase had them.
	clientOn, serverOn map[int]float64
	placed             bool
}

func newMeasured(rate float64) *measured {
	return &measured{rate: rate, hist: metrics.NewHistogram(), serverSeen: true, openLoop: true, hiccupSeen: true, sameCPU: 2, placed: true}
}

func (m *measured) add(p metrics.Phase) error {
	if p.Histogram != "" {
		h, err := p.DecodeHistogram()
		if err != nil {
			return fmt.Errorf("capacity: phase %q: %w", p.Name, err)
		}
		m.hist.Merge(h)
	}
	m.phases = append(m.phases, p.Name)
	m.ops += p.Ops
	for _, n := range p.Errors {
		m.errs += n
	}
	m.durS += p.DurationS
	m.clientCPUS += p.ClientCPUS
	if p.Server != nil {
		m.serverCPUS += p.Server.CPUS
		// A companion (cache-aside's cache) serves the same requests: its
		// CPU is part of their cost.
		if p.Companion != nil {
			m.serverCPUS += p.Companion.CPUS
		}
	} else {
		m.serverSeen = false
	}
	var b []int64
	for _, s := range p.Series {
		b = append(b, s.Backlog)
	}
	m.backlogs = append(m.backlogs, b)
	if h := p.Hiccup; h != nil && h.All.Wakes > 0 {
		for i, v := range []float64{h.All.P50, h.All.P99, h.All.P999, h.All.Max} {
			m.hiccup[i] = max(m.hiccup[i], v)
		}
		m.speedNs = max(m.speedNs, h.All.SpeedNs)
		m.burstMs = max(m.burstMs, h.All.BurstMs)
		if h.MachineBusyCPUs > 0 {
			m.machineBusyS += h.MachineBusyCPUs * h.Seconds
			m.machineS += h.Seconds
			m.machineCPUs = max(m.machineCPUs, len(h.PerCPU))
		}
	} else {
		m.hiccupSeen = false
	}
	if pl := p.Placement; pl != nil && pl.Samples > 0 {
		m.sameCPU = min(m.sameCPU, pl.SameCPU)
		m.clientOn = addShares(m.clientOn, pl.Client, p.ClientCPUS)
		if p.Server != nil {
			m.serverOn = addShares(m.serverOn, pl.Server, p.Server.CPUS)
		}
	} else {
		m.sameCPU = -1
		m.placed = false
	}
	if ol := p.OpenLoop; ol != nil {
		m.unsent += ol.UnsentOps
		m.clientLate += ol.ClientLateOps
		m.saturated = m.saturated || ol.ClientSaturated
		m.spinS += ol.WaitSpinS
	} else {
		m.openLoop = false
	}
	return nil
}

func addShares(on map[int]float64, shares map[int]float64, cpuS float64) map[int]float64 {
	if on == nil {
		on = map[int]float64{}
	}
	for cpu, sh := range shares {
		on[cpu] += sh * cpuS
	}
	return on
}

// mainShare is the part of a side's CPU time on the CPU it used most; 0
// when it used none that was measured.
func mainShare(on map[int]float64) float64 {
	var top, all float64
	for _, s := range on {
		top, all = max(top, s), all+s
	}
	if all <= 0 {
		return 0
	}
	return math.Round(1000*top/all) / 1000
}

// achieved is the rate the step carried: the offered rate times the share
// of its due ops that were sent (each sent op completes before its phase
// ends). Ops over the measured duration would be biased low for a short
// step: the duration runs to the last reply, one latency past the schedule.
// Without open-loop figures, it is ops over the duration.
func (m *measured) achieved() float64 {
	if m.openLoop && m.ops+m.unsent > 0 {
		return m.rate * float64(m.ops) / float64(m.ops+m.unsent)
	}
	if m.durS <= 0 {
		return 0
	}
	return float64(m.ops) / m.durS
}

// backlogSlope is the backlog's growth in ops/s over the last half of each
// phase, one least-squares slope shared by the phases with an intercept
// each (an extension starts with an empty backlog), and its standard error;
// 0, 0 when no phase has 2 seconds in its last half.
func (m *measured) backlogSlope() (slope, stderr float64) {
	var sxy, sxx, n float64
	var fits [][2][]float64
	for _, b := range m.backlogs {
		half := b[len(b)/2:]
		if len(half) < 2 {
			continue
		}
		var xs, ys []float64
		var mx, my float64
		for i, v := range half {
			xs = append(xs, float64(i))
			ys = append(ys, float64(v))
			mx += float64(i)
			my += float64(v)
		}
		mx /= float64(len(half))
		my /= float64(len(half))
		for i := range xs {
			xs[i] -= mx
			ys[i] -= my
			sxy += xs[i] * ys[i]
			sxx += xs[i] * xs[i]
		}
		n += float64(len(half))
		fits = append(fits, [2][]float64{xs, ys})
	}
	if sxx == 0 {
		return 0, 0
	}
	slope = sxy / sxx
	dof := n - float64(len(fits)) - 1 // one intercept per phase, one slope
	if dof < 1 {
		return slope, 0
	}
	var sse float64
	for _, f := range fits {
		for i := range f[0] {
			r := f[1][i] - slope*f[0][i]
			sse += r * r
		}
	}
	return slope, math.Sqrt(sse / dof / sxx)
}

func (m *measured) backlog() []int64 {
	var all []int64
	for _, b := range m.backlogs {
		all = append(all, b...)
	}
	return all
}

// rules are what a step's verdict depends on.
type rules struct {
	connections int
	slo         SLO
	ciShare     float64
	errorBudget float64
	rtt         time.Duration // the network path's added round trip (--rtt)
}

// judge makes the step's figures and verdict; done says the step needs no
// extension: every interval is narrow enough, or the verdict cannot change
// (not sustained, or an interval wholly above its bound).
func (m *measured) judge(r rules) (st schema.Step, done bool) {
	st = schema.Step{
		Phases:        m.phases,
		OfferedOpsS:   m.rate,
		AchievedOpsS:  m.achieved(),
		DurationS:     m.durS,
		Ops:           m.ops,
		Errors:        m.errs,
		Backlog:       m.backlog(),
		UnsentOps:     m.unsent,
		ClientLateOps: m.clientLate,
		ServerCPUUs:   -1,
	}
	if m.hist.TotalCount() > 0 {
		st.P50Us = us(time.Duration(m.hist.ValueAtQuantile(50)))
		st.P99Us = us(time.Duration(m.hist.ValueAtQuantile(99)))
		st.MaxUs = us(time.Duration(m.hist.Max()))
	}
	if m.ops > 0 {
		// The engine's spin before each intended start is waiting, not the
		// cost of an op: it would count ~100 µs per op at any rate. It is
		// the spin's CPU (its yields at what one costs), not the loops'
		// wall time, which overcounted when workers outnumber the client's
		// threads (8 workers on 2 CPUs took a memory store's client CPU to
		// 0 µs/op).
		st.ClientCPUUs = (m.clientCPUS - min(m.spinS, m.clientCPUS)) * 1e6 / float64(m.ops)
		if m.serverSeen {
			st.ServerCPUUs = m.serverCPUS * 1e6 / float64(m.ops)
		}
	}
	var why []string
	narrow, hopeless := true, false
	st.MeetsSLO = m.hist.TotalCount() > 0
	if !st.MeetsSLO {
		why = append(why, "no successful op")
	}
	for _, o := range r.slo {
		iv, ok := PercentileCI(m.hist, o.Percentile)
		if !ok {
			narrow = false
			continue
		}
		pc := schema.Percentile{
			Percentile:  o.Percentile,
			ValueUs:     us(iv.Value),
			LowUs:       us(iv.Low),
			HighUs:      us(iv.High),
			Open:        iv.Open,
			WidthShare:  float64(iv.Width()) / float64(o.Max),
			ObjectiveUs: us(o.Max),
		}
		st.Percentiles = append(st.Percentiles, pc)
		if iv.Value > o.Max {
			st.MeetsSLO = false
			why = append(why, fmt.Sprintf("p%s %s > %v", pct(o.Percentile), latencyText(iv.Value), o.Max))
		}
		if iv.Low > o.Max {
			hopeless = true
		}
		if iv.Open || pc.WidthShare > r.ciShare {
			narrow = false
		}
	}
	slope, se := m.backlogSlope()
	st.BacklogSlope = slope
	// Each connection's sample is an op behind or not by chance.
	st.BacklogNoise = max(2*se, backlogNoiseShare*m.rate, float64(max(r.connections, 1)))
	// "At least" is the client's CPU alone: late starts while it had CPU
	// to spare are its scheduling (an idle CPU waking late), named below.
	st.ClientLimited = m.saturated
	st.Sustained = true
	if a := st.AchievedOpsS; a < MinAchieved*m.rate {
		st.Sustained = false
		why = append(why, fmt.Sprintf("achieved %.1f%% of the offered rate", 100*a/m.rate))
	}
	if slope > st.BacklogNoise {
		st.Sustained = false
		why = append(why, fmt.Sprintf("backlog grows %.0f ops/s (noise %.0f)", slope, st.BacklogNoise))
	}
	if float64(m.errs) > r.errorBudget*float64(m.ops) || m.ops == 0 {
		st.Sustained = false
		why = append(why, fmt.Sprintf("%d errors of %d ops (budget %s%%)", m.errs, m.ops, pct(100*r.errorBudget)))
	}
	st.Passed = st.MeetsSLO && st.Sustained
	if st.Passed {
		st.Verdict = "meets the SLO, sustained"
	} else {
		st.Verdict = strings.Join(why, "; ")
	}
	if st.ClientLimited {
		st.Verdict += "; client-limited"
	}
	if m.hiccupSeen {
		st.HiccupP99Us, st.HiccupMaxUs, st.HiccupBurstMs = m.hiccup[1], m.hiccup[3], m.burstMs
		st.HiccupSpeedNs = m.speedNs
	}
	st.OtherLoadCPUs = m.otherLoad()
	if busy, n := m.machineBusy(); n > 0 {
		st.MachineBusyCPUs, st.MachineCPUs = busy, n
		st.ClientBusyCPUs = m.clientCPUS / m.durS
		if m.serverSeen {
			st.ServerBusyCPUs = m.serverCPUS / m.durS
		}
	}
	if m.placed {
		st.ClientMainCPU, st.ServerMainCPU = mainShare(m.clientOn), mainShare(m.serverOn)
	}
	st.SharedCPUClientShare = m.sharedCPUClientShare()
	st.Limiter, st.LimiterEvidence = m.limiter(st, r)
	if st.Limiter != "" && st.Moved() {
		st.LimiterEvidence += "; " + st.MovedText()
	}
	if st.Limiter != "" && st.Limiter != schema.LimiterClientCPU {
		st.Verdict += "; " + st.Limiter + ": " + st.LimiterEvidence
	}
	return st, narrow || hopeless || !st.Sustained
}

// stallShare is how large the platform's stalls at an objective's
// percentile must be, as a share of its bound, to have decided a missed
// step: wake-ups half as late as the bound leave the store half of it.
const stallShare = 0.5

// limiter names what bounded the step, with the figures that show it:
// the client's CPU first (the figures are the client's), then the
// platform's stalls when a latency objective was missed and the hiccup
// meter saw wake-ups at least half as late as its bound at its
// percentile, or one stall that alone held the objective's share of the
// ops past it (longStallShare), then the network path, other load, the
// machine's CPUs (full, the client a third of it), the client's
// scheduling (late starts with CPU to spare), else the store. A step
// that passed with CPU to spare has none.
func (m *measured) limiter(st schema.Step, r rules) (name, evidence string) {
	procs := runtime.GOMAXPROCS(0)
	busy, work := 0.0, 0.0
	if m.durS > 0 {
		busy = m.clientCPUS / m.durS
		work = (m.clientCPUS - min(m.spinS, m.clientCPUS)) / m.durS
	}
	shared := ""
	if share := m.sharedCPUClientShare(); share > 0 {
		shared = fmt.Sprintf("; client and server ran on one CPU and the client took %.0f%% of it (%.1f µs per op beside the server's %.1f)",
			100*share, m.clientCPUS*1e6/float64(max(m.ops, 1)), m.serverCPUS*1e6/float64(max(m.ops, 1)))
	}
	if st.ClientLimited {
		return schema.LimiterClientCPU, fmt.Sprintf("the client kept %.2f CPUs busy of the %d it may use (%.2f without its spin-wait)", busy, procs, work) + shared
	}
	if st.Passed {
		return "", ""
	}
	if m.hiccupSeen {
		for _, o := range r.slo {
			iv, ok := PercentileCI(m.hist, o.Percentile)
			if !ok || iv.Value <= o.Max {
				continue
			}
			if stall := m.stallAt(o.Percentile); stall >= stallShare*us(o.Max) {
				return schema.LimiterPlatform, fmt.Sprintf("the platform stalled p%s %s (hiccup meter, max %s) beside p%s ≤ %v: this SLO measures the machine, not the store",
					pct(o.Percentile), latencyText(time.Duration(stall*1e3)), latencyText(time.Duration(m.hiccup[3]*1e3)), pct(o.Percentile), o.Max) + shared
			}
			if stall, share := m.longStallShare(o.Max); share >= 1-o.Percentile/100 {
				what := fmt.Sprintf("stalled once for %s (hiccup meter's max)", latencyText(stall))
				if burst := time.Duration(m.burstMs * 1e6); burst == stall && burst > time.Duration(m.hiccup[3]*1e3) {
					what = fmt.Sprintf("held a CPU off for %s within %v (hiccup meter; its longest single stall %s)",
						latencyText(burst), hiccup.BurstWindow, latencyText(time.Duration(m.hiccup[3]*1e3)))
				}
				return schema.LimiterPlatform, fmt.Sprintf("the platform %s: the ops due in its first %s waited past %v, %s%% of the step's, beside p%s ≤ %v: this SLO measures the machine, not the store",
					what, latencyText(stall-o.Max), o.Max, pct(100*share), pct(o.Percentile), o.Max) + shared
			}
		}
	}
	if r.rtt > 0 {
		for _, o := range r.slo {
			if iv, ok := PercentileCI(m.hist, o.Percentile); ok && iv.Value > o.Max && 2*r.rtt >= o.Max {
				return schema.LimiterNetwork, fmt.Sprintf("the network path adds a %v round trip to every request beside p%s ≤ %v: the path, not the store, sets this bound", r.rtt, pct(o.Percentile), o.Max) + shared
			}
		}
	}
	if other := m.otherLoad(); other >= otherLoadCPUs {
		return schema.LimiterMachineLoad, fmt.Sprintf("other processes kept %.2f of the run's CPUs busy beside the client's %.2f and the server's %.2f: the machine, not the store, was short of CPU",
			other, busy, m.serverCPUS/m.durS) + shared
	}
	if st.MachineFull() && busy >= st.MachineBusyCPUs/3 {
		return schema.LimiterMachineCPUs, fmt.Sprintf("the run's %d CPUs were %.0f%% busy (client %.2f, server %.2f CPUs): client and server shared a full machine and the server had no more CPU than the client left it: this bound is the machine's",
			st.MachineCPUs, 100*st.MachineBusyCPUs/float64(st.MachineCPUs), busy, m.serverCPUS/m.durS) + shared
	}
	if m.ops > 0 && float64(m.clientLate) > clientLateShare*float64(m.ops) {
		return schema.LimiterClientScheduling, fmt.Sprintf("%.1f%% of ops started late by the client while it kept %.2f of %d CPUs busy (%.2f without its spin-wait)", 100*float64(m.clientLate)/float64(m.ops), busy, procs, work) + shared
	}
	if m.serverSeen && m.durS > 0 {
		return schema.LimiterStore, fmt.Sprintf("its server kept %.2f CPUs busy", m.serverCPUS/m.durS) + shared
	}
	return schema.LimiterStore, "its latency or throughput, with the client's CPU to spare"
}

// sharedCPUClientShare is the client's part of the CPU time it and the
// managed server spent when they ran on one CPU (same-CPU share ≥ 0.8 in
// every phase); 0 otherwise.
func (m *measured) sharedCPUClientShare() float64 {
	if m.sameCPU < 0.8 || m.sameCPU > 1 || !m.serverSeen || m.clientCPUS+m.serverCPUS <= 0 {
		return 0
	}
	return m.clientCPUS / (m.clientCPUS + m.serverCPUS)
}

// otherLoadCPUs is how much other load names the machine as a missed
// step's limiter: half a CPU's worth of work that is neither the client's
// nor the server's (a build, a backup, another benchmark).
const otherLoadCPUs = 0.5

// otherLoad is how many CPUs' worth processes other than the client and
// the managed server kept busy over the step; 0 when it cannot tell (no
// managed server's CPU, whose work would count as other, or no reading of
// the machine's).
func (m *measured) otherLoad() float64 {
	if !m.serverSeen || m.machineS <= 0 || m.durS <= 0 {
		return 0
	}
	return max(0, m.machineBusyS/m.machineS-(m.clientCPUS+m.serverCPUS)/m.durS)
}

// longStallShare is the share of an open-loop step's ops that the hiccup
// meter's longest stall alone held past bound: those due in its first
// (stall − bound), which waited for it to end. A rare stall is missed by
// the meter's percentiles but not by the step's: at 8,000 ops/s against
// Redis on the 2-vCPU VM one 32 ms stall (hiccup max; steal, no run-queue
// wait in perf sched) held ~240 ops past 10 ms, 3% of a 1 s step, and
// made its p99 28 ms. A cluster of short stalls within
// hiccup.BurstWindow holds the ops as one stall of their sum: 1 s steps
// at 32,000 ops/s whose ops waited up to 28 ms while no wake-up was
// later than 3.7 ms had a probe lose 24.5 ms of 50 ms. stall is the
// longer of the two.
func (m *measured) longStallShare(bound time.Duration) (stall time.Duration, share float64) {
	stall = max(time.Duration(m.hiccup[3]*1e3), time.Duration(m.burstMs*1e6))
	if m.durS <= 0 {
		return stall, 0
	}
	return stall, max(0, (stall-bound).Seconds()) / m.durS
}

// machineBusy is how many CPUs' worth the run's CPUs kept busy over the
// step, every process on them, and how many they were; n is 0 when not
// measured.
func (m *measured) machineBusy() (busy float64, n int) {
	if m.machineS <= 0 || m.durS <= 0 || m.machineCPUs == 0 {
		return 0, 0
	}
	return m.machineBusyS / m.machineS, m.machineCPUs
}

// stallAt is the hiccup meter's wake-up lateness, µs, at the percentile
// an objective names (the nearest it records at or above it).
func (m *measured) stallAt(percentile float64) float64 {
	switch {
	case percentile <= 50:
		return m.hiccup[0]
	case percentile <= 99:
		return m.hiccup[1]
	case percentile <= 99.9:
		return m.hiccup[2]
	}
	return m.hiccup[3]
}

// widest is how many times more samples the step needs for its widest
// interval to narrow to share of its bound (width shrinks as 1/√n).
func widest(st schema.Step, share float64) float64 {
	need := 1.0
	for _, p := range st.Percentiles {
		switch {
		case p.Open:
			need = max(need, 4)
		case p.WidthShare > share:
			need = max(need, (p.WidthShare/share)*(p.WidthShare/share))
		}
	}
	return need
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// latencyText writes a latency with three significant digits: "291ms",
// "6.4ms", "850µs".
func latencyText(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'g', 3, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'g', 3, 64) + "ms"
	}
	return strconv.FormatFloat(float64(d)/1e3, 'g', 3, 64) + "µs"
}

func pct(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
