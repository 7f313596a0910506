package metrics

import (
	"math"
	"time"
)

// Placement is where the client's and a managed server's threads ran during
// a phase's measured part. On a small machine it explains latency: a
// loopback round trip costs several times more when client and server run
// on different CPUs than when they share one.
//
// Every PlacementInterval, the CPU each thread last ran on (/proc/PID/task/
// TID/stat "processor") is read with the CPU time the thread used since the
// previous sample (utime+stime, 10 ms ticks), which weighs the sample: idle
// threads do not count. A thread that moved between CPUs within an interval
// counts wholly on the last one.
type Placement struct {
	// Client and Server map a CPU number to its share of that side's busy
	// time (shares sum to 1). Client is every thread of the storebench
	// process but the sampler's; Server the server process and its
	// descendants (re-listed every second, so a process that lives less
	// than that, such as a connection-per-op PostgreSQL backend, is missed).
	Client map[int]float64 `json:"client"`
	Server map[int]float64 `json:"server"`
	// SameCPU estimates how much of the time client and server ran on the
	// same CPU, 0 to 1: per interval, the sum over CPUs of the smaller of the
	// two sides' shares, averaged over the intervals weighted by the less
	// busy side's CPU time. 1 when both are pinned to one CPU, 0 when pinned
	// apart; in between it cannot tell sharing from alternating within one
	// interval.
	SameCPU float64 `json:"same_cpu"`
	// Samples is how many intervals were read.
	Samples int `json:"samples"`
}

// PlacementInterval is how often a PlacementSampler reads the threads.
const PlacementInterval = 200 * time.Millisecond

// placementAcc sums the busy time per CPU of both sides over the intervals.
type placementAcc struct {
	client, server  []float64 // CPU time per CPU, all intervals
	sameSum, weight float64   // of SameCPU's weighted mean
	samples         int
}

// add takes one interval: each side's CPU time per CPU (index = CPU).
func (a *placementAcc) add(client, server []float64) {
	a.samples++
	a.client = addTo(a.client, client)
	a.server = addTo(a.server, server)
	ct, st := sum(client), sum(server)
	if ct == 0 || st == 0 {
		return
	}
	w := math.Min(ct, st)
	a.sameSum += overlap(client, ct, server, st) * w
	a.weight += w
}

// result is nil when either side used no measurable CPU time: then nothing
// can be said about sharing.
func (a *placementAcc) result() *Placement {
	ct, st := sum(a.client), sum(a.server)
	if ct == 0 || st == 0 {
		return nil
	}
	p := &Placement{Client: shares(a.client, ct), Server: shares(a.server, st), Samples: a.samples}
	if a.weight > 0 {
		p.SameCPU = a.sameSum / a.weight
	} else {
		// No interval saw both sides busy (ticks are 10 ms): the phase's
		// totals are the only evidence left.
		p.SameCPU = overlap(a.client, ct, a.server, st)
	}
	p.SameCPU = round3(p.SameCPU)
	return p
}

func overlap(a []float64, at float64, b []float64, bt float64) float64 {
	var o float64
	for i := range min(len(a), len(b)) {
		o += math.Min(a[i]/at, b[i]/bt)
	}
	return o
}

func shares(v []float64, total float64) map[int]float64 {
	m := map[int]float64{}
	for cpu, x := range v {
		if x > 0 {
			m[cpu] = round3(x / total)
		}
	}
	return m
}

func addTo(dst, src []float64) []float64 {
	for len(dst) < len(src) {
		dst = append(dst, 0)
	}
	for i, x := range src {
		dst[i] += x
	}
	return dst
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
