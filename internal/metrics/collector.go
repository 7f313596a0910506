package metrics

import (
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Second is one second of a phase, across all workers. Ops counts every
// operation that completed in the second, failed ones included; the latency
// figures are over the successful ones. p50 and p99 come from 2-digit
// histograms (within 1%); max and mean are exact. The last second of a phase
// is usually partial.
type Second struct {
	T      int64   `json:"t_s"` // seconds since the measured start: [T, T+1)
	Ops    int64   `json:"ops"`
	Errors int64   `json:"errors"`
	P50    float64 `json:"p50_us"`
	P99    float64 `json:"p99_us"`
	Max    float64 `json:"max_us"`
	Mean   float64 `json:"mean_us"`
	// Backlog is, for an open-loop phase, how many ops were due but not yet
	// sent, summed over the workers, each sampled when it started its last
	// op of the second (a worker stuck in one long op all second adds
	// nothing to that second). Omitted for closed-loop phases.
	Backlog int64 `json:"backlog,omitempty"`
}

// maxLag is how many seconds a second may wait for a silent worker (one stuck
// in a long operation) before it is completed without that worker's data.
// Data handed in later still adds to the second's ops, errors, max and mean,
// not to its percentiles. It bounds the collector's memory to maxLag+1
// pending seconds whatever the run length or worker count.
const maxLag = 5

// doneMark is the watermark of a worker that has stopped.
const doneMark = math.MaxInt64

// Collector gathers the per-second data of the Recorders that share it and
// reduces each second to a Second once every worker has moved past it. Its
// lock is taken once per worker per second, from the worker's goroutine.
type Collector struct {
	mu sync.Mutex
	// wm[i] is worker i's watermark: it will hand in nothing for seconds
	// before wm[i] (doneMark once it has stopped).
	wm       []int64
	frontier int64 // the furthest second any running worker has reached
	maxData  int64 // the last second that received data, -1 if none
	next     int64 // the first second not yet completed
	pending  map[int64]*secAcc
	free     []*secAcc
	series   []Second
	totals   []secTotals // per completed second, so late data keeps the mean exact
	finished bool

	onSecond func(Second)
	queue    []Second
	notify   chan struct{} // wakes the callback goroutine; closed by finish
	cbDone   chan struct{}
}

type secAcc struct {
	h       *hdr.Histogram
	ops     int64
	errs    int64
	sumNs   int64
	maxNs   int64
	backlog int64
}

type secTotals struct{ ok, sumNs, maxNs int64 }

// NewCollector returns a collector. onSecond, if not nil, is called with each
// completed second, in order, from a goroutine of the collector's own, so a
// slow callback never delays a worker. Merge (or Close) stops that goroutine.
func NewCollector(onSecond func(Second)) *Collector {
	c := &Collector{
		maxData:  -1,
		pending:  make(map[int64]*secAcc),
		onSecond: onSecond,
	}
	if onSecond != nil {
		c.notify = make(chan struct{}, 1)
		c.cbDone = make(chan struct{})
		go c.callbacks()
	}
	return c
}

func (c *Collector) register() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wm = append(c.wm, 0)
	return len(c.wm) - 1
}

// handoff merges a worker's interval for second sec and moves the worker's
// watermark to wm; real says wm is the current time rather than a promise.
// It runs on the worker's goroutine; iv is the worker's and is reset by it
// afterwards.
func (c *Collector) handoff(id int, sec int64, iv *interval, backlog int64, wm int64, real bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if iv.ops > 0 {
		c.add(sec, iv, backlog)
	}
	c.wm[id] = wm
	if real {
		c.frontier = max(c.frontier, wm)
	}
	if c.finished {
		return
	}
	lowest := int64(doneMark)
	for _, w := range c.wm {
		lowest = min(lowest, w)
	}
	// Complete a second once every worker has passed it, or once a worker is
	// maxLag seconds past it, but never beyond what has been seen.
	last := max(c.maxData, c.frontier-1)
	for c.next <= last && (c.next < lowest || c.next+maxLag < c.frontier) {
		c.complete()
	}
}

func (c *Collector) add(sec int64, iv *interval, backlog int64) {
	c.maxData = max(c.maxData, sec)
	if sec < c.next { // late: the second was already completed
		s, t := &c.series[sec], &c.totals[sec]
		s.Ops += iv.ops
		s.Errors += iv.errs
		s.Backlog += backlog
		t.ok += iv.h.TotalCount()
		t.sumNs += iv.sumNs
		t.maxNs = max(t.maxNs, iv.maxNs)
		if t.ok > 0 {
			s.Max = us(t.maxNs)
			s.Mean = us(t.sumNs) / float64(t.ok)
		}
		return
	}
	a := c.pending[sec]
	if a == nil {
		if n := len(c.free); n > 0 {
			a, c.free = c.free[n-1], c.free[:n-1]
		} else {
			a = &secAcc{h: newSeriesHistogram()}
		}
		c.pending[sec] = a
	}
	a.h.Merge(iv.h)
	a.ops += iv.ops
	a.errs += iv.errs
	a.sumNs += iv.sumNs
	a.maxNs = max(a.maxNs, iv.maxNs)
	a.backlog += backlog
}

// complete reduces second c.next to its figures and frees its histogram.
func (c *Collector) complete() {
	s := Second{T: c.next}
	var t secTotals
	if a := c.pending[c.next]; a != nil {
		delete(c.pending, c.next)
		s.Ops, s.Errors, s.Backlog = a.ops, a.errs, a.backlog
		t = secTotals{ok: a.h.TotalCount(), sumNs: a.sumNs, maxNs: a.maxNs}
		if t.ok > 0 {
			s.P50 = us(a.h.ValueAtQuantile(50))
			s.P99 = us(a.h.ValueAtQuantile(99))
			s.Max = us(a.maxNs)
			s.Mean = us(a.sumNs) / float64(t.ok)
		}
		a.h.Reset()
		*a = secAcc{h: a.h}
		c.free = append(c.free, a)
	}
	c.series = append(c.series, s)
	c.totals = append(c.totals, t)
	c.next++
	if c.onSecond != nil {
		c.queue = append(c.queue, s)
		select { // non-blocking under the lock: one pending wake-up is enough
		case c.notify <- struct{}{}:
		default:
		}
	}
}

func (c *Collector) callbacks() {
	defer close(c.cbDone)
	for range c.notify {
		c.drain()
	}
	c.drain()
}

func (c *Collector) drain() {
	c.mu.Lock()
	q := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, s := range q {
		c.onSecond(s)
	}
}

// finish completes every second up to end (exclusive) and any that received
// data, stops the callback goroutine after it has delivered them, and returns
// the series. Later calls return the same series.
func (c *Collector) finish(end int64) []Second {
	c.mu.Lock()
	if !c.finished {
		for c.next < max(end, c.maxData+1) {
			c.complete()
		}
		c.finished = true
		if c.notify != nil {
			close(c.notify)
		}
	}
	series := c.series
	c.mu.Unlock()
	if c.cbDone != nil {
		<-c.cbDone
	}
	return series
}

// Close stops the callback goroutine without waiting for a Merge; seconds
// not yet completed are completed and delivered first. It is safe to call
// after Merge.
func (c *Collector) Close() { c.finish(0) }

func us(ns int64) float64 { return float64(ns) / 1e3 }
