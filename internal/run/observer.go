package run

import (
	"encoding/json"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// Observer is told what a run does while it does it; the terminal's
// progress display is one. Its methods are called from the run's
// goroutine, but Second from the engine's.
type Observer interface {
	// Logf receives one log line: "starting redis", "[3/12] redis/kv/keys=1000".
	Logf(format string, args ...any)
	// Begin receives the planned cells, in the order they run, before the first.
	Begin(cells []CellInfo)
	// CellStarted says the i-th cell of Begin's is measured from now.
	CellStarted(i int)
	// Second receives each completed second of the running cell's phases
	// (workload.Hooks.OnSecond).
	Second(phase string, s metrics.Second)
	// CellDone says the i-th cell took seconds of wall time.
	CellDone(i int, seconds float64)
}

// CellInfo is what an observer knows of a planned cell.
type CellInfo struct {
	Label    string  // the cell's id, with its round in a repeated run
	Target   string  // its target's label
	Workload string  // its workload type: kv, throughput, …
	Weight   float64 // its work relative to its target's other cells: its key count, else 1
	// OpenLoop says its load has an arrival rate, so its phases have a
	// backlog; workloads that set their own rates (capacity, replay) are
	// not marked.
	OpenLoop bool
}

// Remaining estimates the time left of a run: each unfinished cell costs
// what finished cells of its target cost per unit of weight, or, for a
// target with none finished yet, what all finished cells cost on average.
// secs holds each finished cell's wall time, -1 for one not finished; cur
// is the running cell (-1: none), running for inCur. ok is false while no
// cell has finished.
func Remaining(cells []CellInfo, secs []float64, cur int, inCur time.Duration) (left time.Duration, ok bool) {
	perTarget := map[string][2]float64{} // label -> seconds, weight
	var allS, allW float64
	for i, s := range secs {
		if s < 0 {
			continue
		}
		c := cells[i]
		t := perTarget[c.Target]
		t[0] += s
		t[1] += c.Weight
		perTarget[c.Target] = t
		allS += s
		allW += c.Weight
	}
	if allW == 0 {
		return 0, false
	}
	var est float64
	for i, s := range secs {
		if s >= 0 {
			continue
		}
		c := cells[i]
		rate := allS / allW
		if t, ok := perTarget[c.Target]; ok && t[1] > 0 {
			rate = t[0] / t[1]
		}
		cellEst := rate * c.Weight
		if i == cur {
			cellEst = max(0, cellEst-inCur.Seconds())
		}
		est += cellEst
	}
	return time.Duration(est * float64(time.Second)), true
}

// weight is how much work a cell is, relative to others of its target.
func (c cell) weight() float64 {
	if n, ok := c.number("keys"); ok {
		return n
	}
	return 1
}

// openLoop says the cell's load has an arrival rate (its ops are sent on a
// schedule, so its phases have a backlog).
func (c cell) openLoop() bool {
	r, ok := c.number("rate")
	return ok && r > 0
}

// number is the numeric parameter name; ok is false when there is none.
func (c cell) number(name string) (float64, bool) {
	switch n := c.params[name].(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
