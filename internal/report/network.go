package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/result"
)

// networkPhases are, for a workload type, the phases the network section
// shows; the phases of a type not listed are all shown. Of a sessions cell
// only the read path is: its creates, keepalives and reaps run beside the
// reads so that there is something to read.
var networkPhases = map[string][]string{"sessions": {"read"}}

// NetworkText prints, when a run put a network between the clients and its
// targets (cells with an rtt_ms parameter), one table per workload type and
// phase (throughput set and get, sessions read): a row per round-trip time
// (direct = loopback, without the network path), the round trip the probe
// measured, each target's p50 per op, the spread between the targets' p50s
// and that spread over the RTT, then from which RTT on the targets differ by
// less than the RTT. It shows where the difference between stores
// disappears into the round trip. Then the path's own cost: each target's
// p50 at rtt 0 through the path (the proxy or the kernel's veth pair and
// relay) minus its p50 direct. Last, the mechanism and where the clients
// connected. It prints nothing for a run without a network.
func NetworkText(w io.Writer, r *result.Result) {
	groups, order := networkGroups(r)
	if len(order) == 0 {
		return
	}
	for _, key := range order {
		g := groups[key]
		fmt.Fprintf(w, "\nnetwork: %s %s, p50 µs per op at each round-trip time (spread = slowest p50 - fastest)\n", g.workload, g.phase)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "rtt\tmeasured ms\t")
		for _, t := range g.targets {
			fmt.Fprintf(tw, "%s\t", t)
		}
		fmt.Fprintln(tw, "spread µs\tspread/rtt\t")
		for _, row := range g.rows {
			fmt.Fprintf(tw, "%s\t%s\t", row.label(), row.measured())
			for _, t := range g.targets {
				if v, ok := row.p50[t]; ok {
					fmt.Fprintf(tw, "%s\t", us(v))
				} else {
					fmt.Fprint(tw, "—\t")
				}
			}
			spread, rel := "—", "—"
			if s, ok := row.spread(); ok {
				spread = us(s)
				if row.rttMs != nil && *row.rttMs > 0 {
					rel = fixed(s/(*row.rttMs*1000), 2)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", spread, rel)
		}
		tw.Flush()
		if s := g.reading(); s != "" {
			fmt.Fprintf(w, "  %s\n", s)
		}
		direct, zero := g.find(nil), g.find(ptr(0))
		if direct != nil && zero != nil {
			var parts []string
			for _, t := range g.targets {
				d, ok1 := direct.p50[t]
				z, ok2 := zero.p50[t]
				if ok1 && ok2 {
					parts = append(parts, fmt.Sprintf("%s %+.1f µs", t, z-d))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "  the path's own cost (p50 at rtt 0 through the path - p50 direct): %s\n", strings.Join(parts, ", "))
			}
		}
	}
	mechs := map[string]bool{}
	via := map[string][]string{} // target -> where its clients connected
	var targets []string
	for _, c := range r.Cells {
		if m, ok := c.Params["net_mechanism"].(string); ok {
			mechs[m] = true
		}
		if a, ok := c.Params["net_proxy"].(string); ok && a != "" {
			if via[c.Target] == nil {
				targets = append(targets, c.Target)
			}
			if !slices.Contains(via[c.Target], a) {
				via[c.Target] = append(via[c.Target], a)
			}
		}
	}
	for _, m := range sortedKeys(mechs) {
		fmt.Fprintf(w, "  network mechanism: %s\n", m)
	}
	if len(targets) > 0 {
		var parts []string
		for _, t := range targets {
			parts = append(parts, t+" via "+strings.Join(via[t], ", "))
		}
		fmt.Fprintf(w, "  clients connect to %s\n", strings.Join(parts, "; "))
	}
}

type netRow struct {
	rttMs *float64 // nil: direct
	p50   map[string]float64
	meas  []float64 // the probe's round trips, ms
}

func (r *netRow) label() string {
	switch {
	case r.rttMs == nil:
		return "direct"
	case *r.rttMs == 0:
		return "0 (path)"
	}
	return rttLabel(*r.rttMs)
}

// rttLabel is an RTT in ms as "0.5 ms".
func rttLabel(ms float64) string {
	return strings.TrimSuffix(strings.TrimRight(fixed(ms, 3), "0"), ".") + " ms"
}

// spread is the slowest p50 minus the fastest, when the row has two or more.
func (r *netRow) spread() (float64, bool) {
	if len(r.p50) < 2 {
		return 0, false
	}
	var v []float64
	for _, x := range r.p50 {
		v = append(v, x)
	}
	return slices.Max(v) - slices.Min(v), true
}

func (r *netRow) measured() string {
	if len(r.meas) == 0 {
		return "—"
	}
	lo, hi := slices.Min(r.meas), slices.Max(r.meas)
	if hi-lo < 0.0005 {
		return fixed(lo, 3)
	}
	return fixed(lo, 3) + "-" + fixed(hi, 3)
}

type netGroup struct {
	workload, phase string
	targets         []string
	rows            []*netRow
}

func (g *netGroup) find(rtt *float64) *netRow {
	for _, r := range g.rows {
		if (r.rttMs == nil) == (rtt == nil) && (rtt == nil || *r.rttMs == *rtt) {
			return r
		}
	}
	return nil
}

// reading says from which RTT on the targets' p50s differ by less than the
// RTT (at that RTT and every longer one), or that they never do; "" when no
// row with an RTT above 0 has two targets.
func (g *netGroup) reading() string {
	from, seen := -1.0, false
	for _, r := range g.rows { // sorted by rtt
		if r.rttMs == nil || *r.rttMs <= 0 {
			continue
		}
		s, ok := r.spread()
		if !ok {
			continue
		}
		seen = true
		switch {
		case s >= *r.rttMs*1000:
			from = -1
		case from < 0:
			from = *r.rttMs
		}
	}
	switch {
	case !seen:
		return ""
	case from < 0:
		return "the stores' p50s differ by the RTT or more at the longest RTT measured"
	}
	return "the stores' p50s differ by less than the RTT from " + rttLabel(from) + " on"
}

func ptr(v float64) *float64 { return &v }

// networkGroups collects the cells of workload types that have a network
// cell, by type and phase (networkPhases); rows sorted by rtt, direct first.
func networkGroups(r *result.Result) (map[string]*netGroup, []string) {
	withNet := map[string]bool{}
	for _, c := range r.Cells {
		if _, ok := c.Params["rtt_ms"]; ok {
			withNet[c.Workload] = true
		}
	}
	groups := map[string]*netGroup{}
	var order []string
	repeats := map[*netRow]map[string][]float64{} // a repeated cell's p50s, for their median
	for _, c := range r.Cells {
		if !withNet[c.Workload] || c.Status != result.CellOK {
			continue
		}
		var rtt *float64
		if v, ok := c.Params["rtt_ms"].(float64); ok {
			rtt = &v
		}
		for _, p := range c.Phases {
			if only, ok := networkPhases[c.Workload]; ok && !slices.Contains(only, p.Name) {
				continue
			}
			key := c.Workload + "/" + p.Name
			g := groups[key]
			if g == nil {
				g = &netGroup{workload: c.Workload, phase: p.Name}
				groups[key] = g
				order = append(order, key)
			}
			if !slices.Contains(g.targets, c.Target) {
				g.targets = append(g.targets, c.Target)
			}
			row := g.find(rtt)
			if row == nil {
				row = &netRow{rttMs: rtt, p50: map[string]float64{}}
				g.rows = append(g.rows, row)
			}
			if c.Repeat > 0 {
				if repeats[row] == nil {
					repeats[row] = map[string][]float64{}
				}
				repeats[row][c.Target] = append(repeats[row][c.Target], p.LatencyUs.P50)
				if c.Repeat > 1 {
					continue
				}
			} else if _, dup := row.p50[c.Target]; dup {
				continue // another entry at the same rtt: the first one stands
			}
			row.p50[c.Target] = p.LatencyUs.P50
			if m, ok := c.Params["rtt_measured_ms"].(float64); ok {
				row.meas = append(row.meas, m)
			}
		}
	}
	for row, byTarget := range repeats {
		for t, p50s := range byTarget {
			slices.Sort(p50s)
			row.p50[t] = p50s[(len(p50s)-1)/2]
		}
	}
	for _, g := range groups {
		slices.SortStableFunc(g.rows, func(a, b *netRow) int {
			return cmpRTT(a.rttMs) - cmpRTT(b.rttMs)
		})
	}
	return groups, order
}

// cmpRTT orders rows: direct, then by rtt (µs resolution).
func cmpRTT(v *float64) int {
	if v == nil {
		return -1
	}
	return int(math.Round(*v * 1000))
}
