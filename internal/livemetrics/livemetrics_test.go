package livemetrics

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/run"
	"github.com/storebench/storebench/internal/testkit"
)

func TestParseAddr(t *testing.T) {
	for in, want := range map[string]string{
		":9100":          "127.0.0.1:9100",
		":0":             "127.0.0.1:0",
		"0.0.0.0:9100":   "0.0.0.0:9100",
		"localhost:9100": "localhost:9100",
		"[::1]:9100":     "[::1]:9100",
		"[::]:65535":     "[::]:65535",
	} {
		if got, err := ParseAddr(in); err != nil || got != want {
			t.Errorf("ParseAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"9100", "", "localhost", ":65536", ":-1", ":http", "127.0.0.1:", "a:b:9100"} {
		if got, err := ParseAddr(in); err == nil {
			t.Errorf("ParseAddr(%q) = %q, want an error", in, got)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseAddr(%q): %q is more than one line", in, err)
		}
	}
}

// calls records what the wrapped observer is told, to check forwarding.
type calls struct{ log []string }

func (c *calls) Logf(format string, args ...any) { c.log = append(c.log, fmt.Sprintf(format, args...)) }
func (c *calls) Begin(cells []run.CellInfo) {
	c.log = append(c.log, fmt.Sprintf("begin %d", len(cells)))
}
func (c *calls) CellStarted(i int) { c.log = append(c.log, fmt.Sprintf("started %d", i)) }
func (c *calls) Second(phase string, s metrics.Second) {
	c.log = append(c.log, fmt.Sprintf("second %s %d", phase, s.T))
}
func (c *calls) CellDone(i int, _ float64) { c.log = append(c.log, fmt.Sprintf("done %d", i)) }

// scrape reads storebench's metrics at url, as a map from
// "name{label=value,…}" to value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(testkit.Get(t, url)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "storebench_") {
			continue
		}
		for _, m := range f.Metric {
			var lv []string
			for _, name := range []string{"target", "cell", "workload", "phase", "stat"} { // the collector's order
				for _, l := range m.Label {
					if l.GetName() == name {
						lv = append(lv, name+"="+l.GetValue())
					}
				}
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			got[name+"{"+strings.Join(lv, ",")+"}"] = v
		}
	}
	return got
}

// TestObserverMetrics: the figures a scrape reads are the seconds told so
// far, summed per cell and phase, the last second's latency, a backlog for
// an open loop only, the current cell and the count of cells done, label
// values redacted; every call reaches the wrapped observer; after Close
// the port is shut.
func TestObserverMetrics(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", func(s string) string { return strings.ReplaceAll(s, "hunter2", "xxxxx") })
	if err != nil {
		t.Fatal(err)
	}
	next := &calls{}
	obs := srv.Observe(next)
	obs.Begin([]run.CellInfo{
		{Label: "memory/throughput", Target: "memory", Workload: "throughput"},
		{Label: "memory/mix", Target: "memory", Workload: "mix", OpenLoop: true},
		{Label: "memory/kv/hunter2", Target: "memory", Workload: "kv"}, // a password the command knows
	})
	obs.Logf("starting %s", "memory")
	obs.CellStarted(0)
	obs.Second("set", metrics.Second{T: 0, Ops: 1000, Errors: 2, P50: 10, P99: 250, Max: 900, Mean: 20})
	obs.Second("set", metrics.Second{T: 1, Ops: 500, Errors: 1, P50: 12, P99: 300, Max: 1000, Mean: 22})
	obs.Second("get", metrics.Second{T: 0, Ops: 7, Backlog: 3})

	const cell0 = "target=memory,cell=memory/throughput,workload=throughput"
	m := scrape(t, srv.URL())
	for k, want := range map[string]float64{
		"storebench_ops_total{" + cell0 + ",phase=set}":                        1500,
		"storebench_errors_total{" + cell0 + ",phase=set}":                     3,
		"storebench_ops_total{" + cell0 + ",phase=get}":                        7,
		"storebench_second_latency_seconds{" + cell0 + ",phase=set,stat=p50}":  12e-6,
		"storebench_second_latency_seconds{" + cell0 + ",phase=set,stat=p99}":  300e-6,
		"storebench_second_latency_seconds{" + cell0 + ",phase=set,stat=max}":  1000e-6,
		"storebench_second_latency_seconds{" + cell0 + ",phase=set,stat=mean}": 22e-6,
		"storebench_backlog_ops{" + cell0 + ",phase=get}":                      3,
		"storebench_cell{" + cell0 + "}":                                       1,
		"storebench_cells_done{}":                                              0,
		"storebench_cells_total{}":                                             3,
	} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := m["storebench_backlog_ops{"+cell0+",phase=set}"]; ok {
		t.Errorf("a closed-loop phase has a backlog: %v", m)
	}
	if _, ok := m["storebench_cell{target=memory,cell=memory/mix,workload=mix}"]; ok {
		t.Errorf("a cell not begun is shown: %v", m)
	}

	obs.CellDone(0, 2)
	obs.CellStarted(1)
	obs.Second("read", metrics.Second{Ops: 9}) // an open loop not behind
	m = scrape(t, srv.URL())
	for k, want := range map[string]float64{
		"storebench_cell{" + cell0 + "}":                                                0,
		"storebench_cell{target=memory,cell=memory/mix,workload=mix}":                   1,
		"storebench_ops_total{target=memory,cell=memory/mix,workload=mix,phase=read}":   9,
		"storebench_backlog_ops{target=memory,cell=memory/mix,workload=mix,phase=read}": 0,
		"storebench_ops_total{" + cell0 + ",phase=set}":                                 1500,
		"storebench_cells_done{}":                                                       1,
	} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}

	// Label values go through the command's redaction, as its stdout does.
	obs.CellDone(1, 1)
	obs.CellStarted(2)
	obs.Second("hunter2", metrics.Second{Ops: 1})
	if body := testkit.Get(t, srv.URL()); strings.Contains(body, "hunter2") {
		t.Errorf("a password the command knows is served:\n%s", body)
	} else if !strings.Contains(body, `storebench_ops_total{cell="memory/kv/xxxxx",phase="xxxxx",target="memory",workload="kv"} 1`) {
		t.Errorf("the redacted cell's ops are not served:\n%s", body)
	}

	want := []string{"begin 3", "starting memory", "started 0", "second set 0", "second set 1", "second get 0", "done 0", "started 1", "second read 0",
		"done 1", "started 2", "second hunter2 0"}
	if strings.Join(next.log, "|") != strings.Join(want, "|") {
		t.Errorf("forwarded %q, want %q", next.log, want)
	}

	addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "http://"), "/metrics")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Refused(t, addr)
}

// TestListenPortInUse: a port another socket holds is refused by Listen,
// so the CLI can refuse it before any work.
func TestListenPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if srv, err := Listen(ln.Addr().String(), nil); err == nil {
		srv.Close()
		t.Fatalf("Listen(%s) on a port in use succeeded", ln.Addr())
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Listen on a port in use: %v, want address in use", err)
	}
}
