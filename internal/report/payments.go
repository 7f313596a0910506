package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/payments"
)

// paymentsOf is a cell's payments summary: the one place this file reads
// it, so moving the schema's types is a one-line change here.
func paymentsOf(c *result.Cell) *payments.Summary { return c.Payments }

// paymentsModel is the payments section of every format: per cell its
// committed transfers/s and steady state, declines, retries, errors and
// deletes, the invariants verdict and each check, declines by reason, and
// committed transfers over time.
type paymentsModel struct {
	cells     []paymentsCell
	summary   *table // one row per cell
	declines  *table // cell × reason; nil when nothing was declined
	checks    *table // every invariant check of every cell
	retries   []string
	overTime  *lineChartSpec
	bucketLen string // "10 s" or "1 min": the over-time table's buckets
}

// paymentsCell is what the terminal prints of one cell.
type paymentsCell struct {
	label, headline, declinedBy string
	notes                       []string
}

const paymentsTitle = "payments (per-step latency is in the cells table: phases rt1–rt4, transfer, delete)"

// newPaymentsModel builds the section; nil without a payments cell.
// colorOf gives each target its colour on the HTML page (nil elsewhere).
func newPaymentsModel(r *result.Result, colorOf map[string]int) *paymentsModel {
	cells := cellsWith(r, paymentsOf)
	if len(cells) == 0 {
		return nil
	}
	m := &paymentsModel{summary: newTable("payments", "committed transfers per second, and what else the transfers did", true,
		column{head: "cell", left: true}, column{head: "mode", left: true}, column{head: "committed/s", m: "committed_per_s"},
		column{head: "steady state", left: true}, column{head: "committed", m: "committed"}, column{head: "declined", m: "declined"},
		column{head: "retried", m: "retries"}, column{head: "errors", m: "errors"}, column{head: "deletes", m: "deletes"},
		column{head: "invariants", left: true})}
	m.checks = newTable("payments-invariants", "the invariant checks after the run (warm-up included)", false,
		column{head: "cell", left: true}, column{head: "check", left: true}, column{head: "verdict", left: true}, column{head: "detail", left: true})
	for _, c := range cells {
		s := paymentsOf(c)
		m.cells = append(m.cells, paymentsCell{label: c.Label(), headline: s.Headline(), declinedBy: reasonsText(s.DeclinedBy), notes: s.Notes})
		verdict := "ok"
		if !s.Invariants.OK {
			verdict = "VIOLATED"
		}
		m.summary.add(textCell(c.Label()), textCell(s.Mode), figureCell(whole(s.CommittedPerS), s.CommittedPerS), textCell(steadyText(s.Steady)),
			countCell(s.Committed), countCell(s.Declined), countCell(s.Retries), countCell(s.Errors), countCell(s.Deletes), textCell(verdict))
		for _, k := range s.Invariants.Checks {
			detail := k.Detail
			if len(k.Rows) > 0 {
				detail += " [" + strings.Join(k.Rows, "; ") + "]"
			}
			m.checks.add(textCell(c.Label()), textCell(k.Name), textCell(map[bool]string{true: "ok", false: "VIOLATED"}[k.OK]), textCell(detail))
		}
		for _, sample := range s.RetrySamples {
			m.retries = append(m.retries, c.Label()+": "+sample)
		}
	}
	m.declines = declinesTable(cells)
	m.overTime, m.bucketLen = transfersOverTime(cells, colorOf)
	return m
}

// steadyText is the steady state: "last 30s: 2,318/s, cv 0.07".
func steadyText(s payments.SteadyState) string {
	if s.WindowS <= 0 {
		return "—"
	}
	return fmt.Sprintf("last %s s: %s/s, cv %s", shortest(s.WindowS), whole(s.MeanPerS), fixed(s.CV, 2))
}

// reasonsText is declines by reason, "insufficient funds 12, …" sorted.
func reasonsText(by map[string]int64) string {
	var parts []string
	for reason, n := range by {
		parts = append(parts, fmt.Sprintf("%s %d", reason, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// declinesTable is a row per cell, a column per decline reason any cell
// has; nil when no cell declined a transfer.
func declinesTable(cells []*result.Cell) *table {
	seen := map[string]bool{}
	for _, c := range cells {
		for reason := range paymentsOf(c).DeclinedBy {
			seen[reason] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	reasons := sortedKeys(seen)
	cols := []column{{head: "cell", left: true}}
	for _, reason := range reasons {
		cols = append(cols, column{head: reason, m: "declined_" + reason})
	}
	t := newTable("payments-declines", "declined transfers by reason", true, cols...)
	for _, c := range cells {
		row := []cell{textCell(c.Label())}
		for _, reason := range reasons {
			row = append(row, countCell(paymentsOf(c).DeclinedBy[reason]))
		}
		t.add(row...)
	}
	return t
}

// transfersOverTime is committed transfers per second of each cell, by
// 10 s bucket (by minute for runs of more than 30 buckets).
func transfersOverTime(cells []*result.Cell, colorOf map[string]int) (*lineChartSpec, string) {
	long := false
	for _, c := range cells {
		long = long || len(paymentsOf(c).Per10s) > 30
	}
	bucketsOf, unit := func(s *payments.Summary) []payments.Bucket { return s.Per10s }, "10 s"
	if long {
		bucketsOf, unit = func(s *payments.Summary) []payments.Bucket { return s.PerMinute }, "1 min"
	}
	cols := []column{{head: "from s", left: true}}
	var starts []int64
	at := map[int64]map[int]payments.Bucket{} // start -> cell index -> bucket
	spec := &lineChartSpec{id: "chart-payments-over-time", title: "Committed transfers per second over time",
		sub: "mean of each " + unit + " of the measured part, one line per cell", xLabel: "seconds since the measured start", yLabel: "transfers/s",
		xFmt: func(v float64) string { return trimNum(v) + " s" }, yFmt: countLabel,
		desc: fmt.Sprintf("Line chart of committed transfers per second against time, in buckets of %s, for %s.", unit, plural(len(cells), "cell"))}
	for i, c := range cells {
		cols = append(cols, column{head: c.Label(), m: "committed_per_s"})
		l := line{key: c.Label(), color: colorOf[c.Target], variant: i, markers: true}
		for _, b := range bucketsOf(paymentsOf(c)) {
			if b.Seconds < 1 {
				continue // the run's last fraction of a second: too short for a rate
			}
			if at[b.StartS] == nil {
				at[b.StartS] = map[int]payments.Bucket{}
				starts = append(starts, b.StartS)
			}
			at[b.StartS][i] = b
			l.points = append(l.points, point{x: float64(b.StartS) + b.Seconds/2, y: b.CommittedPerS,
				title: fmt.Sprintf("%s, from %d s: %s transfers/s", c.Label(), b.StartS, whole(b.CommittedPerS))})
		}
		spec.lines = append(spec.lines, l)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	spec.table = newTable("payments-over-time", "committed transfers per second, per "+unit+" of the measured part", true, cols...)
	for _, start := range starts {
		row := []cell{textCell(fmt.Sprint(start))}
		for i := range cells {
			if b, ok := at[start][i]; ok {
				row = append(row, figureCell(whole(b.CommittedPerS), b.CommittedPerS))
			} else {
				row = append(row, textCell("—"))
			}
		}
		spec.table.add(row...)
	}
	return spec, unit
}

// PaymentsText prints, for every payments cell, its committed transfers/s,
// steady state, declines by reason, retries and the invariant verdict.
func PaymentsText(w io.Writer, r *result.Result) { sectionText(w, r, "payments") }

// text prints the section for the terminal.
func (m *paymentsModel) text(w io.Writer) {
	fmt.Fprintln(w, "\n"+paymentsTitle)
	for _, c := range m.cells {
		fmt.Fprintf(w, "  %s: %s\n", c.label, c.headline)
		if c.declinedBy != "" {
			fmt.Fprintf(w, "    declined by reason: %s\n", c.declinedBy)
		}
		for _, n := range c.notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
}

// render writes the section to Markdown or HTML.
func (m *paymentsModel) render(d doc) {
	d.para("Committed transfers per second, the steady state over the last part of the run, and what else the transfers did; per-step latency is in the cells table (phases rt1–rt4, transfer, delete). Retried transactions (deadlocks, serialization failures, lock timeouts) are not errors.")
	d.table(m.summary)
	d.heading("", "Invariants")
	d.table(m.checks)
	d.heading("", "Declines and retries by reason")
	if m.declines != nil {
		d.table(m.declines)
	} else {
		d.para("No transfer was declined.")
	}
	if len(m.retries) > 0 {
		d.para("Retried errors, a few of each cell's, distinct:")
		d.list(m.retries)
	} else {
		d.para("No transaction was retried.")
	}
	var notes []string
	for _, c := range m.cells {
		for _, n := range c.notes {
			notes = append(notes, c.label+": "+n)
		}
	}
	d.list(notes)
	d.heading("", "Transfers over time")
	d.lineChart(m.overTime)
}
