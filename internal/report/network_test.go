package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

func TestNetworkText(t *testing.T) {
	cell := func(target, name string, rtt *float64, set, get float64) result.Cell {
		p := map[string]any{}
		if rtt != nil {
			p["rtt_ms"], p["rtt_measured_ms"], p["net_mechanism"] = *rtt, *rtt+0.02, "proxy (kernel has no netem qdisc)"
		}
		return result.Cell{ID: target + "/" + name, Target: target, Workload: "throughput", Name: name, Params: p, Status: result.CellOK,
			Phases: []metrics.Phase{{Name: "set", LatencyUs: metrics.Latency{P50: set}}, {Name: "get", LatencyUs: metrics.Latency{P50: get}}}}
	}
	r := &result.Result{Cells: []result.Cell{
		cell("postgres", "direct", nil, 500, 80), cell("postgres", "rtt-5ms", ptr(5), 5600, 5090), cell("postgres", "rtt-0", ptr(0), 520, 95),
		cell("redis", "direct", nil, 20, 18), cell("redis", "rtt-0", ptr(0), 40, 35), cell("redis", "rtt-5ms", ptr(5), 5050, 5040),
	}}
	var b bytes.Buffer
	NetworkText(&b, r)
	out := b.String()
	for _, want := range []string{
		"network: throughput set, p50 µs per op",
		"direct            —       500   20.0        480           —",
		"0 (proxy)        0.020       520   40.0        480           —",
		"5 ms        5.020     5,600  5,050        550        0.11",
		"the proxy's own cost (p50 at rtt 0 through the proxy - p50 direct): postgres +20.0 µs, redis +20.0 µs",
		"network: throughput get",
		"network mechanism: proxy (kernel has no netem qdisc)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Rows in rtt order, direct first, whatever the cells' order.
	if i, j := strings.Index(out, "0 (proxy)"), strings.Index(out, "5 ms"); i > j {
		t.Errorf("rows out of order:\n%s", out)
	}
	b.Reset()
	NetworkText(&b, &result.Result{Cells: []result.Cell{cell("redis", "direct", nil, 1, 1)}})
	if b.Len() != 0 {
		t.Errorf("a run without a network prints %q", b.String())
	}
}
