// Package hiccup measures the platform's own stalls the way jHiccup and
// cyclictest do: a thread on each watched CPU asks to wake every interval
// and records how late it woke. What it records is what any thread of the
// run would have suffered at that moment (a hypervisor's steal, an idle
// virtual CPU's slow wake-up, a higher-priority task), so a latency figure
// can be set beside the stalls that no store caused.
package hiccup

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DefaultInterval is how often each probe asks to wake: jHiccup's and
// cyclictest's 1 ms, fine enough to see a 1 ms stall and cheap (about a
// thousand wake-ups per CPU per second).
const DefaultInterval = time.Millisecond

// maxLateness bounds what a histogram records: a probe that wakes later
// than this is recorded at it (a minute-long stall is a frozen machine).
const maxLateness = time.Minute

// ErrUnsupported is Start's error where the platform has no way to put a
// thread on a CPU and sleep it to an absolute time.
var ErrUnsupported = errors.New("hiccup: this platform cannot pin a probe to a CPU")

// Figures are one probe's wake-ups in one window, lateness in microseconds.
type Figures struct {
	CPU   int     `json:"cpu"`
	Wakes int64   `json:"wakes"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p99_9_us"`
	Max   float64 `json:"max_us"`
	// StalledMs is the time the probe woke later than one interval,
	// summed: how much of the window the platform took away.
	StalledMs float64 `json:"stalled_ms"`
}

// Window is every probe's figures over one window (a phase), and all
// probes' wake-ups merged (CPU -1).
type Window struct {
	Interval time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
	All      Figures       `json:"all"`
	PerCPU   []Figures     `json:"per_cpu"`
}

// Meter runs one probe per watched CPU until Stop.
type Meter struct {
	interval time.Duration
	probes   []*probe
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	since    time.Time
}

type probe struct {
	cpu     int
	mu      sync.Mutex
	late    *hdrhistogram.Histogram // lateness, ns
	stalled time.Duration
	err     error
}

// Start puts a probe on each CPU of cpus (every CPU this process may use
// when empty), each waking every interval (DefaultInterval when zero).
func Start(cpus []int, interval time.Duration) (*Meter, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if interval < 100*time.Microsecond || interval > time.Second {
		return nil, fmt.Errorf("hiccup: interval %v: want 100µs to 1s (finer costs a CPU, coarser misses the stalls that matter)", interval)
	}
	if len(cpus) == 0 {
		var err error
		if cpus, err = AllowedCPUs(); err != nil {
			return nil, err
		}
	}
	cpus = slices.Compact(slices.Sorted(slices.Values(cpus)))
	m := &Meter{interval: interval, stop: make(chan struct{}), since: time.Now()}
	started := make(chan error, len(cpus))
	for _, cpu := range cpus {
		p := &probe{cpu: cpu, late: newHistogram()}
		m.probes = append(m.probes, p)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			// The thread keeps its pinned mask and exits with the
			// goroutine: no other goroutine may inherit it.
			runtime.LockOSThread()
			if err := pinThread(p.cpu); err != nil {
				started <- fmt.Errorf("hiccup: put a probe on CPU %d: %w", p.cpu, err)
				return
			}
			started <- nil
			p.run(m.interval, m.stop)
		}()
	}
	var errs []error
	for range cpus {
		errs = append(errs, <-started)
	}
	if err := errors.Join(errs...); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(maxLateness), 3)
}

// run sleeps to absolute times one interval apart, as cyclictest does, so
// a late wake-up does not shift the next one; after a stall longer than an
// interval it starts again from now instead of catching up in a burst.
func (p *probe) run(interval time.Duration, stop <-chan struct{}) {
	next, err := monotonicNow()
	if err != nil {
		p.fail(err)
		return
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		next += int64(interval)
		if err := sleepUntil(next); err != nil {
			p.fail(err)
			return
		}
		now, err := monotonicNow()
		if err != nil {
			p.fail(err)
			return
		}
		late := max(now-next, 0)
		p.mu.Lock()
		_ = p.late.RecordValue(min(late, int64(maxLateness)))
		if late > int64(interval) {
			p.stalled += time.Duration(late)
		}
		p.mu.Unlock()
		if late > int64(interval) {
			next = now
		}
	}
}

func (p *probe) fail(err error) {
	p.mu.Lock()
	p.err = fmt.Errorf("hiccup: probe on CPU %d: %w", p.cpu, err)
	p.mu.Unlock()
}

// Window returns the figures since the last Window (or Start) and starts
// a new window: one call at each phase's end gives that phase's stalls.
func (m *Meter) Window() (Window, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	w := Window{Interval: m.interval, Seconds: now.Sub(m.since).Seconds(), All: Figures{CPU: -1}}
	m.since = now
	all := newHistogram()
	var errs []error
	for _, p := range m.probes {
		p.mu.Lock()
		h, stalled, err := p.late, p.stalled, p.err
		p.late, p.stalled = newHistogram(), 0
		p.mu.Unlock()
		errs = append(errs, err)
		all.Merge(h)
		f := figures(h, stalled)
		f.CPU = p.cpu
		w.PerCPU = append(w.PerCPU, f)
		w.All.StalledMs += f.StalledMs
	}
	stalledMs := w.All.StalledMs
	w.All = figures(all, 0)
	w.All.CPU, w.All.StalledMs = -1, stalledMs
	return w, errors.Join(errs...)
}

func figures(h *hdrhistogram.Histogram, stalled time.Duration) Figures {
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return Figures{
		Wakes:     h.TotalCount(),
		P50:       us(h.ValueAtQuantile(50)),
		P99:       us(h.ValueAtQuantile(99)),
		P999:      us(h.ValueAtQuantile(99.9)),
		Max:       us(h.Max()),
		StalledMs: float64(stalled) / 1e6,
	}
}

// Stop ends every probe and waits for them.
func (m *Meter) Stop() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	m.wg.Wait()
}
