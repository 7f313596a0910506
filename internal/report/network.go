package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/storebench/storebench/internal/result"
)

// networkPhases are, for a workload type, the phases the network section
// shows; the phases of a type not listed are all shown. Of a sessions cell
// only the read path is: its creates, keepalives and reaps run beside the
// reads so that there is something to read.
var networkPhases = map[string][]string{"sessions": {"read"}}

// networkModel is the network section of every format: for a run that put
// a network between the clients and its targets (cells with an rtt_ms
// parameter), one table per workload type and phase (throughput set and
// get, sessions read): a row per round-trip time (direct = loopback,
// without the network path), the round trip the probe measured, each
// target's p50 per op, the spread between the targets' p50s and that
// spread over the RTT; then from which RTT on the targets differ by less
// than the RTT, and the path's own cost: each target's p50 at rtt 0
// through the path (the proxy or the kernel's veth pair and relay) minus
// its p50 direct. Last, the mechanism and where the clients connected. It
// shows where the difference between stores disappears into the round trip.
type networkModel struct {
	groups     []networkSection
	mechanisms []string // "network mechanism: …"
	via        string   // "clients connect to …"; "" when no cell says
}

type networkSection struct {
	title    string
	table    *table
	reading  string // from which RTT on the stores differ by less than it
	pathCost string
	chart    *lineChartSpec // p50 against RTT, a line per target
}

// newNetworkModel builds the section; nil for a run without a network.
// colorOf gives each target its colour on the HTML page (nil elsewhere).
func newNetworkModel(r *result.Result, colorOf map[string]int) *networkModel {
	groups, order := networkGroups(r)
	if len(order) == 0 {
		return nil
	}
	m := &networkModel{}
	for _, key := range order {
		m.groups = append(m.groups, newNetworkSection(groups[key], colorOf))
	}
	mechs := map[string]bool{}
	via := map[string][]string{} // target -> where its clients connected
	var targets []string
	for _, c := range r.Cells {
		st := c.Settings()
		if st.NetMechanism != "" {
			mechs[st.NetMechanism] = true
		}
		if a := st.NetProxy; a != "" {
			if via[c.Target] == nil {
				targets = append(targets, c.Target)
			}
			if !slices.Contains(via[c.Target], a) {
				via[c.Target] = append(via[c.Target], a)
			}
		}
	}
	for _, v := range sortedKeys(mechs) {
		m.mechanisms = append(m.mechanisms, "network mechanism: "+v)
	}
	if len(targets) > 0 {
		var parts []string
		for _, t := range targets {
			parts = append(parts, t+" via "+strings.Join(via[t], ", "))
		}
		m.via = "clients connect to " + strings.Join(parts, "; ")
	}
	return m
}

func newNetworkSection(g *netGroup, colorOf map[string]int) networkSection {
	s := networkSection{title: fmt.Sprintf("network: %s %s, p50 µs per op at each round-trip time (spread = slowest p50 - fastest)", g.workload, g.phase), reading: g.reading()}
	cols := []column{{head: "rtt", left: true}, {head: "measured ms", m: "rtt_measured_ms"}}
	for _, t := range g.targets {
		cols = append(cols, column{head: t, m: "p50"})
	}
	cols = append(cols, column{head: "spread µs", m: "spread_us"}, column{head: "spread/rtt", m: "spread_per_rtt"})
	s.table = newTable("network", g.workload+" "+g.phase+": p50 µs per op at each round-trip time", true, cols...)
	for _, row := range g.rows {
		cells := []cell{textCell(row.label()), textCell(row.measured())}
		for _, t := range g.targets {
			if v, ok := row.p50[t]; ok {
				cells = append(cells, figureCell(us(v), v))
			} else {
				cells = append(cells, textCell("—"))
			}
		}
		spread, rel := textCell("—"), textCell("—")
		if v, ok := row.spread(); ok {
			spread = figureCell(us(v), v)
			if row.rttMs != nil && *row.rttMs > 0 {
				x := v / (*row.rttMs * 1000)
				rel = figureCell(fixed(x, 2), x)
			}
		}
		s.table.add(append(cells, spread, rel)...)
	}
	s.pathCost = g.pathCost()
	s.chart = &lineChartSpec{id: "chart-network-" + idUnsafe.ReplaceAllString(g.workload+"-"+g.phase, "-"), table: s.table,
		title:  fmt.Sprintf("%s %s: latency against round-trip time", g.workload, g.phase),
		sub:    "p50 µs per op at each RTT through the network path, a line per target; dotted: the RTT itself. Direct (loopback, no path) is in the table",
		desc:   fmt.Sprintf("Line chart of each target's median latency per operation against the round-trip time, from %s to %s, with the round trip itself as a reference line.", g.rows[0].label(), g.rows[len(g.rows)-1].label()),
		xLabel: "round-trip time (ms)", yLabel: "p50 µs", yLog: true, xFmt: func(v float64) string { return trimNum(v) + " ms" }, yFmt: usLabel}
	for _, t := range g.targets {
		l := line{key: t, color: colorOf[t], markers: true}
		for _, row := range g.rows {
			if v, ok := row.p50[t]; ok && row.rttMs != nil {
				l.points = append(l.points, point{x: *row.rttMs, y: v, title: fmt.Sprintf("%s at %s: p50 %s µs", t, row.label(), us(v))})
			}
		}
		s.chart.lines = append(s.chart.lines, l)
	}
	rtt := line{key: "rtt", color: paletteSize - 1, variant: 2, attrs: ` data-label="the round trip itself"`}
	for _, row := range g.rows {
		if row.rttMs != nil && *row.rttMs > 0 {
			rtt.points = append(rtt.points, point{x: *row.rttMs, y: *row.rttMs * 1000, title: "round trip " + row.label()})
		}
	}
	if len(rtt.points) > 0 {
		s.chart.lines = append(s.chart.lines, rtt)
	}
	return s
}

// pathCost is each target's p50 at rtt 0 through the path minus its p50
// direct; "" without both rows.
func (g *netGroup) pathCost() string {
	direct, zero := g.find(nil), g.find(ptr(0))
	if direct == nil || zero == nil {
		return ""
	}
	var parts []string
	for _, t := range g.targets {
		d, ok1 := direct.p50[t]
		z, ok2 := zero.p50[t]
		if ok1 && ok2 {
			parts = append(parts, fmt.Sprintf("%s %+.1f µs", t, z-d))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "the path's own cost (p50 at rtt 0 through the path - p50 direct): " + strings.Join(parts, ", ")
}

// NetworkText prints the network section for the terminal; nothing for a
// run without a network.
func NetworkText(w io.Writer, r *result.Result) { sectionText(w, r, "network") }

// text prints the section for the terminal.
func (m *networkModel) text(w io.Writer) {
	for _, g := range m.groups {
		g.table.textUnder(w, g.title)
		for _, l := range []string{g.reading, g.pathCost} {
			if l != "" {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	indented(w, m.mechanisms)
	if m.via != "" {
		fmt.Fprintf(w, "  %s\n", m.via)
	}
}

// render writes the section to Markdown or HTML: per workload and phase,
// latency against RTT (a chart in HTML) and the table.
func (m *networkModel) render(d doc) {
	d.para("Where the difference between stores disappears into the round trip: each target's p50 per operation at each round-trip time between client and server (direct = loopback without the network path; 0 = through the path without delay); spread = slowest p50 - fastest.")
	for _, g := range m.groups {
		d.heading("", g.title)
		d.lineChart(g.chart)
		var lines []string
		for _, l := range []string{g.reading, g.pathCost} {
			if l != "" {
				lines = append(lines, l)
			}
		}
		d.list(lines)
	}
	notes := slices.Clone(m.mechanisms)
	if m.via != "" {
		notes = append(notes, m.via)
	}
	d.list(notes)
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
		if c.Settings().Network {
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
		st := c.Settings()
		rtt := st.RTTms
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
			if m := st.RTTMeasuredMs; m != nil {
				row.meas = append(row.meas, *m)
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
