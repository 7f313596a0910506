// Package livemetrics serves a running storebench's figures to Prometheus
// (storebench run --metrics-addr): an Observer wrapper keeps what the run
// tells it, each completed second of the running cell's phases, and a
// collector turns that into metrics when scraped. Nothing here touches the
// load engine's per-op path: a second reaches it once per second from the
// metrics collector's callback goroutine.
package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/run"
)

// ParseAddr resolves an address as --metrics-addr takes it: HOST:PORT, or
// :PORT for loopback (a metrics port is not opened to the network unless
// the address says so, e.g. 0.0.0.0:9100). Port 0 picks a free one.
func ParseAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q: want HOST:PORT or :PORT, e.g. :9100 (loopback) or 0.0.0.0:9100", s)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%q: the port must be a number from 0 to 65535", s)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server serves /metrics over HTTP while a run lasts.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	live *Observer
	done chan error // Serve's return
}

// Listen binds addr (as ParseAddr returns it) now, so that a port in use is
// refused before the run does any work, and starts serving. redact is the
// command's redaction of what it prints, applied to every label value: the
// served text is an output like stdout (nil: none).
func Listen(addr string, redact func(string) string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	live := &Observer{redact: redact}
	reg := prometheus.NewRegistry()
	// storebench's own CPU and memory beside its figures: a saturated client
	// shows here while the run lasts.
	reg.MustRegister(live, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A scrape that meets a bad metric still gets the others.
		ErrorHandling: promhttp.ContinueOnError,
	}))
	s := &Server{ln: ln, live: live, done: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is where the metrics are served, with the port picked for port 0.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// Observe returns the observer to run with, once, before the run: it keeps
// the run's figures for the scrapes and tells next everything it is told.
func (s *Server) Observe(next run.Observer) run.Observer {
	s.live.next = next
	return s.live
}

// Close stops serving: the port is closed when it returns. A scrape in
// flight is given a second to finish.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Observer is a run.Observer that keeps the run's live figures and forwards
// every call to the observer it wraps; it is the Server's collector too.
type Observer struct {
	mu     sync.Mutex
	next   run.Observer
	redact func(string) string
	cells  []run.CellInfo // their label values redacted
	state  []cellState    // per cell of cells: 0 not begun, running, done
	cur    int            // the last cell started: seconds are its (-1: none yet)
	done   int
	phases []*phase // in the order first seen
	byKey  map[phaseKey]*phase
}

type cellState uint8

const (
	notBegun cellState = iota
	running
	finished
)

type phaseKey struct {
	cell  int
	phase string
}

// phase is what the seconds of one phase of one cell add up to, and its
// latest second.
type phase struct {
	phaseKey
	ops, errors int64
	last        metrics.Second
	// open says the phase has a backlog to show: its cell's load has a
	// rate, or (a workload setting its own rates) a second carried one;
	// metrics.Second leaves it 0 in closed loops, as result.json does.
	open bool
}

// Logf forwards the log line.
func (o *Observer) Logf(format string, args ...any) { o.next.Logf(format, args...) }

// Begin keeps the planned cells.
func (o *Observer) Begin(cells []run.CellInfo) {
	kept := make([]run.CellInfo, len(cells))
	for i, c := range cells {
		kept[i] = c
		kept[i].Label, kept[i].Target, kept[i].Workload = o.redact(c.Label), o.redact(c.Target), o.redact(c.Workload)
	}
	o.mu.Lock()
	o.cells, o.state, o.cur = kept, make([]cellState, len(cells)), -1
	o.mu.Unlock()
	o.next.Begin(cells)
}

// CellStarted makes cell i the current one.
func (o *Observer) CellStarted(i int) {
	o.mu.Lock()
	if i >= 0 && i < len(o.state) {
		o.state[i], o.cur = running, i
	}
	o.mu.Unlock()
	o.next.CellStarted(i)
}

// Second adds a completed second to its phase of the current cell. It is
// called once per second (from the metrics collector's callback goroutine),
// so a lock and a map lookup cost nothing the engine would see.
func (o *Observer) Second(name string, s metrics.Second) {
	o.mu.Lock()
	if o.cur >= 0 {
		k := phaseKey{o.cur, name}
		p := o.byKey[k]
		if p == nil {
			if o.byKey == nil {
				o.byKey = map[phaseKey]*phase{}
			}
			p = &phase{phaseKey: k, open: o.cells[o.cur].OpenLoop}
			o.byKey[k] = p
			o.phases = append(o.phases, p)
		}
		p.ops += s.Ops
		p.errors += s.Errors
		p.last = s
		p.open = p.open || s.Backlog > 0
	}
	o.mu.Unlock()
	o.next.Second(name, s)
}

// CellDone counts cell i done.
func (o *Observer) CellDone(i int, seconds float64) {
	o.mu.Lock()
	if i >= 0 && i < len(o.state) && o.state[i] != finished {
		o.state[i] = finished
		o.done++
	}
	o.mu.Unlock()
	o.next.CellDone(i, seconds)
}

var (
	cellLabels  = []string{"target", "cell", "workload"}
	phaseLabels = []string{"target", "cell", "workload", "phase"}

	descOps = prometheus.NewDesc("storebench_ops_total",
		"Operations completed in the measured seconds of a phase, failed ones included.", phaseLabels, nil)
	descErrors = prometheus.NewDesc("storebench_errors_total",
		"Operations of a phase that failed.", phaseLabels, nil)
	descLatency = prometheus.NewDesc("storebench_second_latency_seconds",
		"Latency of the phase's last completed second: p50, p99, max or mean (stat).", append(phaseLabels[:4:4], "stat"), nil)
	descBacklog = prometheus.NewDesc("storebench_backlog_ops",
		"Open loop: ops due but not yet sent at the end of the phase's last completed second, summed over the workers.", phaseLabels, nil)
	descCell = prometheus.NewDesc("storebench_cell",
		"1 for the cell being measured, 0 for a finished one.", cellLabels, nil)
	descDone = prometheus.NewDesc("storebench_cells_done",
		"Cells finished so far.", nil, nil)
	descTotal = prometheus.NewDesc("storebench_cells_total",
		"Cells planned.", nil, nil)
)

// Describe sends the descriptions of every metric Collect sends.
func (o *Observer) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOps, descErrors, descLatency, descBacklog, descCell, descDone, descTotal} {
		ch <- d
	}
}

// Collect sends the figures as they are at the scrape.
func (o *Observer) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descTotal, prometheus.GaugeValue, float64(len(o.cells)))
	ch <- prometheus.MustNewConstMetric(descDone, prometheus.GaugeValue, float64(o.done))
	for i, st := range o.state {
		if st == notBegun {
			continue
		}
		c := o.cells[i]
		ch <- prometheus.MustNewConstMetric(descCell, prometheus.GaugeValue, b2f(st == running), c.Target, c.Label, c.Workload)
	}
	for _, p := range o.phases {
		c := o.cells[p.cell]
		lv := []string{c.Target, c.Label, c.Workload, o.redact(p.phase)}
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.CounterValue, float64(p.ops), lv...)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(p.errors), lv...)
		for _, q := range []struct {
			stat string
			us   float64
		}{{"p50", p.last.P50}, {"p99", p.last.P99}, {"max", p.last.Max}, {"mean", p.last.Mean}} {
			ch <- prometheus.MustNewConstMetric(descLatency, prometheus.GaugeValue, q.us/1e6, append(lv, q.stat)...)
		}
		if p.open {
			ch <- prometheus.MustNewConstMetric(descBacklog, prometheus.GaugeValue, float64(p.last.Backlog), lv...)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
