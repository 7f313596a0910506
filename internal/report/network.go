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

// NetworkText prints, when a run put a network between the clients and its
// targets (cells with an rtt_ms parameter), one table per workload type and
// phase: a row per round-trip time (direct = loopback without the proxy),
// the round trip the probe measured, each target's p50 per op, the spread
// between the targets' p50s and that spread over the RTT. It shows where
// the difference between stores disappears into the round trip. Then the
// proxy's own cost: each target's p50 at rtt 0 through the proxy minus its
// p50 direct. It prints nothing for a run without a network.
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
			var p50s []float64
			for _, t := range g.targets {
				v, ok := row.p50[t]
				if !ok {
					fmt.Fprint(tw, "—\t")
					continue
				}
				p50s = append(p50s, v)
				fmt.Fprintf(tw, "%s\t", us(v))
			}
			spread, rel := "—", "—"
			if len(p50s) > 1 {
				s := slices.Max(p50s) - slices.Min(p50s)
				spread = us(s)
				if row.rttMs != nil && *row.rttMs > 0 {
					rel = fmt.Sprintf("%.2f", s/(*row.rttMs*1000))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", spread, rel)
		}
		tw.Flush()
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
				fmt.Fprintf(w, "  the proxy's own cost (p50 at rtt 0 through the proxy - p50 direct): %s\n", strings.Join(parts, ", "))
			}
		}
	}
	mechs := map[string]bool{}
	for _, c := range r.Cells {
		if m, ok := c.Params["net_mechanism"].(string); ok {
			mechs[m] = true
		}
	}
	for _, m := range sortedKeys(mechs) {
		fmt.Fprintf(w, "  network mechanism: %s\n", m)
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
		return "0 (proxy)"
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", *r.rttMs), "0"), ".") + " ms"
}

func (r *netRow) measured() string {
	if len(r.meas) == 0 {
		return "—"
	}
	lo, hi := slices.Min(r.meas), slices.Max(r.meas)
	if hi-lo < 0.0005 {
		return fmt.Sprintf("%.3f", lo)
	}
	return fmt.Sprintf("%.3f-%.3f", lo, hi)
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

func ptr(v float64) *float64 { return &v }

// networkGroups collects the cells of workload types that have a network
// cell, by type and phase; rows sorted by rtt, direct first.
func networkGroups(r *result.Result) (map[string]*netGroup, []string) {
	withNet := map[string]bool{}
	for _, c := range r.Cells {
		if _, ok := c.Params["rtt_ms"]; ok {
			withNet[c.Workload] = true
		}
	}
	groups := map[string]*netGroup{}
	var order []string
	for _, c := range r.Cells {
		if !withNet[c.Workload] || c.Status != result.CellOK {
			continue
		}
		var rtt *float64
		if v, ok := c.Params["rtt_ms"].(float64); ok {
			rtt = &v
		}
		for _, p := range c.Phases {
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
			if _, dup := row.p50[c.Target]; dup {
				continue // another entry at the same rtt: the first one stands
			}
			row.p50[c.Target] = p.LatencyUs.P50
			if m, ok := c.Params["rtt_measured_ms"].(float64); ok {
				row.meas = append(row.meas, m)
			}
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
