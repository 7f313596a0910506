package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// opRow is one kind of operation of a mixed phase (Phase.ByOp): every
// format shows the same rows, so a mix's total cannot hide what its gets
// and its sets each cost.
type opRow struct {
	cell, phase, op string
	f               metrics.OpFigures
	share           float64 // of the phase's ops
	// p95 is from the kind's histogram (YCSB reports a 95th percentile;
	// the phase's figures keep p90): NaN without one.
	p95 float64
}

// opP95 is an op kind's 95th percentile in µs from its histogram, NaN
// when it has none.
func opP95(f metrics.OpFigures) float64 {
	h, err := metrics.DecodeHistogram(f.Histogram)
	if err != nil || h == nil || h.TotalCount() == 0 {
		return math.NaN()
	}
	return float64(h.ValueAtQuantile(95)) / 1e3
}

// byOpRows lists the kinds of every phase that has them, in cell, phase
// and kind order.
func byOpRows(r *result.Result) []opRow {
	var rows []opRow
	for _, c := range r.Cells {
		for _, ph := range c.Phases {
			for _, op := range sortedKeys(ph.ByOp) {
				f := ph.ByOp[op]
				share := 0.0
				if ph.Ops > 0 {
					share = float64(f.Ops) / float64(ph.Ops)
				}
				rows = append(rows, opRow{cell: c.Label(), phase: ph.Name, op: op, f: f, share: share, p95: opP95(f)})
			}
		}
	}
	return rows
}

// opErrors is the total of one kind's errors.
func opErrors(f metrics.OpFigures) int64 { return metrics.ErrorTotal(f.Errors) }

const byOpLede = "each kind of operation of a mixed phase on its own (latency in µs, client-side, per op)"

// ByOpText writes the per-kind table of mixed phases, if any.
func ByOpText(w io.Writer, r *result.Result) {
	rows := byOpRows(r)
	if len(rows) == 0 {
		return
	}
	tw := textTable(w, "\nby operation: "+byOpLede, "cell\tphase\top\tops\tshare\tops/s\tp50\tp95\tp99\tmax\terrors\t")
	for _, o := range rows {
		l := o.f.LatencyUs
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s%%\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.cell, o.phase, o.op, o.f.Ops, fixed(100*o.share, 1),
			whole(o.f.ThroughputOpsS), us(l.P50), us(o.p95), us(l.P99), us(l.Max), errorSummary(o.f.Errors))
	}
	tw.Flush()
}

// byOpMarkdown writes the per-kind table of mixed phases, if any.
func byOpMarkdown(b *strings.Builder, r *result.Result) {
	rows := byOpRows(r)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## By operation\n\nEach kind of operation of a mixed phase on its own: latency in µs, client-side, per operation.\n\n")
	b.WriteString("| cell | phase | op | ops | share | ops/s | p50 | p90 | p95 | p99 | p99.9 | max | mean | errors |\n|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, o := range rows {
		l := o.f.LatencyUs
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s%% | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(o.cell), mdText(o.phase), mdText(o.op),
			thousands(o.f.Ops), num(100*o.share), num(o.f.ThroughputOpsS), num(l.P50), num(l.P90), num(o.p95), num(l.P99), num(l.P999), num(l.Max), num(l.Mean), mdText(errorSummary(o.f.Errors)))
	}
}

// byOpSection writes the per-kind table of mixed phases, if any.
func (p *page) byOpSection() {
	rows := byOpRows(p.m.r)
	if len(rows) == 0 {
		return
	}
	p.s(`<section id="by-op"><h2>By operation</h2>` + "\n")
	p.s(`<p class="lede">Each kind of operation of a mixed phase on its own, so the phase's total does not hide that gets and sets cost differently. Latency in µs, client-side, per operation; an open-loop phase times each operation from its intended start.</p>` + "\n")
	p.s(`<div class="table-wrap"><table data-table="by-op"><thead><tr><th scope="col">cell</th><th scope="col" class="l">phase</th><th scope="col" class="l">op</th><th scope="col">ops</th><th scope="col">share</th><th scope="col">ops/s</th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p95</th><th scope="col">p99</th><th scope="col">p99.9</th><th scope="col">max</th><th scope="col">mean</th><th scope="col">errors</th></tr></thead><tbody>` + "\n")
	for _, o := range rows {
		l := o.f.LatencyUs
		p.f(`<tr data-cell="%s" data-phase="%s" data-op="%s"><th scope="row">%s</th><td class="l">%s</td><td class="l">%s</td>`, esc(o.cell), esc(o.phase), esc(o.op), esc(o.cell), esc(o.phase), esc(o.op))
		p.f(`<td data-m="ops" data-v="%d">%s</td><td data-m="share" data-v="%s">%s%%</td>`, o.f.Ops, thousands(o.f.Ops), exact(o.share), num(100*o.share))
		for _, v := range []struct {
			m string
			v float64
		}{{"ops_s", o.f.ThroughputOpsS}, {"p50", l.P50}, {"p90", l.P90}, {"p95", o.p95}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}, {"mean", l.Mean}} {
			p.f(`<td data-m="%s" data-v="%s">%s</td>`, v.m, exact(v.v), num(v.v))
		}
		bad := ""
		if opErrors(o.f) > 0 {
			bad = ` class="bad"`
		}
		p.f(`<td data-m="errors" data-v="%d"%s>%s</td></tr>`+"\n", opErrors(o.f), bad, esc(errorSummary(o.f.Errors)))
	}
	p.s("</tbody></table></div>\n</section>\n")
}

// byOpMetrics are a phase's CSV rows per kind of operation.
func byOpMetrics(p *metrics.Phase) []csvMetric {
	var out []csvMetric
	for _, op := range sortedKeys(p.ByOp) {
		f := p.ByOp[op]
		pre := "op_" + op + "_"
		out = append(out,
			csvMetric{pre + "ops", fmt.Sprint(f.Ops), "count"},
			csvMetric{pre + "errors", fmt.Sprint(opErrors(f)), "count"},
			csvMetric{pre + "throughput_ops_s", exact(f.ThroughputOpsS), "ops/s"},
		)
		out = append(out, csvLatency(pre, f.LatencyUs)...)
		if p95 := opP95(f); !math.IsNaN(p95) {
			out = append(out, floatMetric(pre+"latency_p95_us", p95, "us"))
		}
	}
	return out
}
