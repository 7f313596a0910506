package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

func TestNetworkText(t *testing.T) {
	params := func(target string, rtt *float64) map[string]any {
		p := map[string]any{}
		if rtt != nil {
			p["rtt_ms"], p["rtt_measured_ms"], p["net_mechanism"] = *rtt, *rtt+0.02, "proxy (kernel has no netem qdisc)"
			p["net_proxy"] = map[string]string{"postgres": "127.0.0.1:5001", "redis": "127.0.0.1:5002"}[target]
		}
		return p
	}
	cell := func(target, name string, rtt *float64, set, get float64) result.Cell {
		return result.Cell{ID: target + "/" + name, Target: target, Workload: "throughput", Name: name, Params: params(target, rtt), Status: result.CellOK,
			Phases: []metrics.Phase{{Name: "set", LatencyUs: metrics.Latency{P50: set}}, {Name: "get", LatencyUs: metrics.Latency{P50: get}}}}
	}
	// A sessions churn cell: only its read phase is the network section's.
	sess := func(target, name string, rtt *float64, read float64) result.Cell {
		return result.Cell{ID: target + "/" + name + "/design=tuned", Target: target, Workload: "sessions", Name: name, Params: params(target, rtt), Status: result.CellOK,
			Phases: []metrics.Phase{
				{Name: "create", LatencyUs: metrics.Latency{P50: 400}}, {Name: "read", LatencyUs: metrics.Latency{P50: read}},
				{Name: "keepalive", LatencyUs: metrics.Latency{P50: 900}}, {Name: "reap", LatencyUs: metrics.Latency{P50: 1200}},
			}}
	}
	r := &result.Result{Cells: []result.Cell{
		cell("postgres", "direct", nil, 500, 80), cell("postgres", "rtt-5ms", ptr(5), 5600, 5090), cell("postgres", "rtt-0", ptr(0), 520, 95),
		cell("postgres", "rtt-0.1ms", ptr(0.1), 700, 210), cell("postgres", "rtt-1ms", ptr(1), 1500, 1090),
		cell("redis", "direct", nil, 20, 18), cell("redis", "rtt-0", ptr(0), 40, 35), cell("redis", "rtt-5ms", ptr(5), 5050, 5040),
		cell("redis", "rtt-0.1ms", ptr(0.1), 140, 135), cell("redis", "rtt-1ms", ptr(1), 1050, 1040),
		sess("postgres", "sessions-direct", nil, 60), sess("postgres", "sessions-rtt-0", ptr(0), 90), sess("postgres", "sessions-rtt-0.1ms", ptr(0.1), 190),
		sess("postgres", "sessions-rtt-5ms", ptr(5), 5080),
		sess("redis", "sessions-direct", nil, 14), sess("redis", "sessions-rtt-0", ptr(0), 50), sess("redis", "sessions-rtt-0.1ms", ptr(0.1), 150),
		sess("redis", "sessions-rtt-5ms", ptr(5), 5050),
	}}
	var b bytes.Buffer
	NetworkText(&b, r)
	out := b.String()
	for _, want := range []string{
		"network: throughput set, p50 µs per op",
		"direct            —       500   20.0        480           —",
		"0 (path)        0.020       520   40.0        480           —",
		"0.1 ms        0.120       700    140        560        5.60",
		"5 ms        5.020     5,600  5,050        550        0.11",
		// set: 560 µs apart at 0.1 ms, 450 at 1 ms, 550 at 5 ms.
		"the stores' p50s differ by less than the RTT from 1 ms on\n  the path's own cost (p50 at rtt 0 through the path - p50 direct): postgres +20.0 µs, redis +20.0 µs\n",
		"network: throughput get",
		// get: 75 µs apart at 0.1 ms already.
		"the stores' p50s differ by less than the RTT from 0.1 ms on\n  the path's own cost (p50 at rtt 0 through the path - p50 direct): postgres +15.0 µs, redis +17.0 µs\n",
		"network: sessions read, p50 µs per op",
		"direct            —      60.0   14.0       46.0           —",
		"0.1 ms        0.120       190    150       40.0        0.40",
		"5 ms        5.020     5,080  5,050       30.0        0.01",
		"the stores' p50s differ by less than the RTT from 0.1 ms on\n  the path's own cost (p50 at rtt 0 through the path - p50 direct): postgres +30.0 µs, redis +36.0 µs\n",
		"network mechanism: proxy (kernel has no netem qdisc)",
		"clients connect to postgres via 127.0.0.1:5001; redis via 127.0.0.1:5002\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"sessions create", "sessions keepalive", "sessions reap", "proxy)", "proxy's"} {
		if strings.Contains(out, not) {
			t.Errorf("output has %q:\n%s", not, out)
		}
	}
	// Rows in rtt order, direct first, whatever the cells' order; the
	// throughput tables before the sessions one, as the cells come.
	if i, j := strings.Index(out, "0 (path)"), strings.Index(out, "5 ms"); i > j {
		t.Errorf("rows out of order:\n%s", out)
	}
	if i, j := strings.Index(out, "throughput get"), strings.Index(out, "sessions read"); i > j {
		t.Errorf("tables out of order:\n%s", out)
	}
	b.Reset()
	NetworkText(&b, &result.Result{Cells: []result.Cell{cell("redis", "direct", nil, 1, 1)}})
	if b.Len() != 0 {
		t.Errorf("a run without a network prints %q", b.String())
	}
}

func TestNetworkReading(t *testing.T) {
	row := func(rtt *float64, a, b float64) *netRow {
		return &netRow{rttMs: rtt, p50: map[string]float64{"a": a, "b": b}}
	}
	for _, tc := range []struct {
		name string
		rows []*netRow
		want string
	}{
		{"from the second", []*netRow{row(nil, 10, 300), row(ptr(0.1), 10, 300), row(ptr(1), 1000, 1200), row(ptr(5), 5000, 5100)},
			"the stores' p50s differ by less than the RTT from 1 ms on"},
		{"not at the longest", []*netRow{row(ptr(0.1), 100, 150), row(ptr(1), 1000, 2500)},
			"the stores' p50s differ by the RTT or more at the longest RTT measured"},
		{"again after a wider one", []*netRow{row(ptr(0.1), 100, 150), row(ptr(0.5), 500, 1100), row(ptr(1), 1000, 1100)},
			"the stores' p50s differ by less than the RTT from 1 ms on"},
		{"one target", []*netRow{{rttMs: ptr(1), p50: map[string]float64{"a": 1}}}, ""},
		{"direct and rtt 0 only", []*netRow{row(nil, 1, 100), row(ptr(0), 1, 100)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&netGroup{rows: tc.rows}).reading(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
