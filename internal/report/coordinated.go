package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// slowOver is the latency above which the coordinated-omission table
// counts an op as slow: well above any loopback op, well below a stall.
const slowOver = 100 * time.Millisecond

// coRow is one phase of a cell in the coordinated-omission comparison.
type coRow struct {
	cell  *result.Cell
	phase *metrics.Phase
	// stallAfter and stallFor are the stall as asked ("1s", "500ms"); "" for none.
	stallAfter, stallFor string
	slow                 int64 // ops slower than the threshold; -1 when the histogram is unreadable
}

func (r coRow) open() bool { return r.phase.OpenLoop != nil }

func (r coRow) loop() string {
	if r.open() {
		return "open, " + whole(r.phase.OpenLoop.TargetOpsS) + "/s"
	}
	return "closed"
}

func (r coRow) stalled() bool { return r.stallFor != "" }

func (r coRow) stallText() string {
	if !r.stalled() {
		return "—"
	}
	return r.stallFor + " at " + r.stallAfter
}

func (r coRow) slowText() string {
	if r.slow < 0 {
		return "—"
	}
	return thousands(r.slow)
}

// coordinated collects, for a run with stalled cells (a stall_for
// parameter), every phase of the cells of the same targets and workload
// types, stalled or not, in the result's order, and the threshold of slow.
func coordinated(r *result.Result) ([]coRow, time.Duration) {
	targets, kinds := map[string]bool{}, map[string]bool{}
	over := slowOver
	for _, c := range r.Cells {
		if st := c.Settings(); st.Stalled {
			f := st.StallFor
			targets[c.Target], kinds[c.Workload] = true, true
			// A short stall would not reach the threshold: count half of it.
			if d, err := time.ParseDuration(f); err == nil && d < 2*over {
				over = d / 2
			}
		}
	}
	if len(targets) == 0 {
		return nil, 0
	}
	var rows []coRow
	for i := range r.Cells {
		c := &r.Cells[i]
		if !targets[c.Target] || !kinds[c.Workload] {
			continue
		}
		st := c.Settings()
		a, f := st.StallAfter, st.StallFor
		for j := range c.Phases {
			p := &c.Phases[j]
			rows = append(rows, coRow{cell: c, phase: p, stallAfter: a, stallFor: f, slow: slowOps(p, over)})
		}
	}
	return rows, over
}

// slowOps counts the successful ops slower than over in the phase's
// histogram (per call with a pipeline); -1 when it cannot be read.
func slowOps(p *metrics.Phase, over time.Duration) int64 {
	if p.Histogram == "" {
		return -1
	}
	n, err := p.SlowerThan(over)
	if err != nil {
		return -1
	}
	return n
}

// coordinatedMeaning says what the table shows: the rule, then this run's
// figures for each stalled closed-loop phase beside a stalled open-loop
// phase of the same target, workload type and phase name.
func coordinatedMeaning(rows []coRow, over time.Duration) []string {
	out := []string{"A closed loop records a stall once per client in flight: each client waits on its one op and sends nothing else meanwhile, so the ops that were due during the stall are never sent, never timed, and its p99 hides the stall. " +
		"An open loop keeps its schedule and times every op from when it was due, so it charges the stall to every op that was due during it (no coordinated omission)."}
	for _, cl := range rows {
		if !cl.stalled() || cl.open() || cl.slow < 0 {
			continue
		}
		i := slices.IndexFunc(rows, func(o coRow) bool {
			return o.stalled() && o.open() && o.slow >= 0 && o.cell.Target == cl.cell.Target && o.cell.Workload == cl.cell.Workload && o.phase.Name == cl.phase.Name
		})
		if i < 0 {
			continue
		}
		op := rows[i]
		out = append(out, fmt.Sprintf("Here, stalled for %s: the open loop (%s) recorded %s of its %s ops slower than %v, p99 %s µs; the closed loop (%s, %d clients) %s of %s, p99 %s µs, though its max (%s µs) shows the stall too.",
			op.stallFor, entryName(op.cell), thousands(op.slow), thousands(op.phase.Ops), over, us(op.phase.LatencyUs.P99),
			entryName(cl.cell), cl.phase.Workers, thousands(cl.slow), thousands(cl.phase.Ops), us(cl.phase.LatencyUs.P99), us(cl.phase.LatencyUs.Max)))
	}
	return out
}

// stallNotes are the notes of the stalled phases: what was done when.
func stallNotes(rows []coRow) []string {
	var out []string
	for _, row := range rows {
		for _, n := range row.phase.Notes {
			if strings.HasPrefix(n, "stall: ") {
				out = append(out, fmt.Sprintf("%s %s: %s", row.cell.Label(), row.phase.Name, n))
			}
		}
	}
	return out
}

// CoordinatedOmissionText prints, for a run that stalled a managed server
// (the coordinated-omission suite, --stall), the stalled cells beside the
// others of the same targets and workloads: loop, stall, percentiles and
// the ops slower than 100 ms, then what it means. It prints nothing for a
// run without a stall.
func CoordinatedOmissionText(w io.Writer, r *result.Result) {
	rows, over := coordinated(r)
	if len(rows) == 0 {
		return
	}
	tw := textTable(w, fmt.Sprintf("\ncoordinated omission: the server stopped (SIGSTOP) for a while, open loop vs closed loop (latency in µs, client-side; slow = ops slower than %v, from the HdrHistogram)", over),
		"cell\tphase\tloop\tclients\tstall\tops\tops/s\tp50\tp99\tp99.9\tmax\tslow\t")
	for _, row := range rows {
		p := row.phase
		l := p.LatencyUs
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.cell.Label(), p.Name, row.loop(), p.Workers, row.stallText(),
			thousands(p.Ops), whole(p.ThroughputOpsS), us(l.P50), us(l.P99), us(l.P999), us(l.Max), row.slowText())
	}
	tw.Flush()
	for _, s := range coordinatedMeaning(rows, over) {
		fmt.Fprintf(w, "  %s\n", s)
	}
	for _, n := range stallNotes(rows) {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// coordinatedMarkdown writes the coordinated-omission table, if the run
// stalled a server.
func coordinatedMarkdown(b *strings.Builder, r *result.Result) {
	rows, over := coordinated(r)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Coordinated omission\n\nThe server stopped (SIGSTOP) for a while: open loop vs closed loop. Latency in µs, client-side; slow = ops slower than %v, from the HdrHistogram.\n\n", over)
	b.WriteString("| cell | phase | loop | clients | stall | ops | ops/s | p50 | p99 | p99.9 | max | slow |\n|:--|:--|:--|--:|:--|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range rows {
		p := row.phase
		l := p.LatencyUs
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(row.cell.Label()), mdText(p.Name), row.loop(), p.Workers, row.stallText(),
			thousands(p.Ops), num(p.ThroughputOpsS), num(l.P50), num(l.P99), num(l.P999), num(l.Max), row.slowText())
	}
	b.WriteString("\n")
	for _, s := range coordinatedMeaning(rows, over) {
		fmt.Fprintf(b, "%s\n\n", mdText(s))
	}
	for _, n := range stallNotes(rows) {
		fmt.Fprintf(b, "- %s\n", mdText(n))
	}
}

// coordinatedID is the HTML section's anchor.
const coordinatedID = "coordinated-omission"

// coordinatedSection draws, for a run that stalled a server, the table of
// coordinated.go, what it means, and the stalled and baseline phases in one
// percentile spectrum and one time chart, a colour per cell.
func (p *page) coordinatedSection() {
	rows, over := coordinated(p.m.r)
	if len(rows) == 0 {
		return
	}
	p.f(`<section id="%s"><h2>Coordinated omission</h2>`+"\n", coordinatedID)
	for _, s := range coordinatedMeaning(rows, over) {
		p.f(`<p class="lede">%s</p>`+"\n", esc(s))
	}
	p.f(`<div class="table-wrap"><table data-table="coordinated-omission"><caption>latency in µs, client-side; slow = ops slower than %s, from the HdrHistogram</caption><thead><tr><th scope="col">cell</th><th scope="col" class="l">phase</th><th scope="col" class="l">loop</th><th scope="col">clients</th><th scope="col" class="l">stall</th><th scope="col">ops</th><th scope="col">ops/s</th><th scope="col">p50</th><th scope="col">p99</th><th scope="col">p99.9</th><th scope="col">max</th><th scope="col">slow</th></tr></thead><tbody>`, esc(over.String()))
	for i, row := range rows {
		ph := row.phase
		l := ph.LatencyUs
		p.f(`<tr data-cell="%s" data-phase="%s"><th scope="row"><span class="swatch-dot c%d"></span>%s</th><td class="l">%s</td><td class="l">%s</td>`, esc(row.cell.Label()), esc(ph.Name), i%paletteSize, esc(row.cell.Label()), esc(ph.Name), esc(row.loop()))
		p.f(`<td data-m="workers" data-v="%d">%d</td><td class="l">%s</td><td data-m="ops" data-v="%d">%s</td>`, ph.Workers, ph.Workers, esc(row.stallText()), ph.Ops, thousands(ph.Ops))
		for _, v := range []struct {
			m string
			v float64
		}{{"ops_s", ph.ThroughputOpsS}, {"p50", l.P50}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}} {
			p.f(`<td data-m="%s" data-v="%s">%s</td>`, v.m, exact(v.v), num(v.v))
		}
		if row.slow >= 0 {
			p.f(`<td data-m="slow" data-v="%d">%s</td></tr>`, row.slow, thousands(row.slow))
		} else {
			p.s(`<td>—</td></tr>`)
		}
	}
	p.s("</tbody></table></div>\n")
	if notes := stallNotes(rows); len(notes) > 0 {
		p.s(`<ul class="notes">`)
		for _, n := range notes {
			p.f("<li>%s</li>", esc(n))
		}
		p.s("</ul>\n")
	}
	// The charts of one phase name at a time, every row its own colour: the
	// cells share a target, so the target's colour would not tell them apart.
	var names []string
	for _, row := range rows {
		if !slices.Contains(names, row.phase.Name) {
			names = append(names, row.phase.Name)
		}
	}
	for _, name := range names {
		g := phaseGroup{workload: coordinatedID, kind: rows[0].cell.Workload, phase: name}
		for i, row := range rows {
			if row.phase.Name == name {
				g.entries = append(g.entries, entry{cell: row.cell, phase: row.phase, label: row.cell.Label(), color: i})
			}
		}
		p.s(`<div class="charts">` + "\n")
		p.spectrumChart(&g)
		p.timeChart(&g)
		p.s("</div>\n")
	}
	p.s("</section>\n")
}
