package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
)

// capacityOf is a cell's capacity summary: the one place this file reads
// it, so moving the schema's types is a one-line change here.
func capacityOf(c *result.Cell) *capacity.Summary { return c.Capacity }

// capacityModel is the capacity section of every format: per cell and SLO
// the capacity found (or that none was), the latency and CPU per op at it
// and the cores a needed rate would take (an extrapolation); the USL fit
// beside the measured capacity (a fit); and per cell the knee curve, every
// step's latency against its offered rate with the SLO and the capacity
// marked.
type capacityModel struct {
	summary *table
	repeats *table   // nil without repeats
	reasons []string // why each capacity is what it is
	costs   []string // what each extrapolation counts
	usl     *table   // nil without a fit
	knees   []capacityKnee
}

type capacityKnee struct {
	label string
	chart *lineChartSpec
}

const capacityTitle = "capacity: the highest offered rate whose steps meet the SLO and are sustained (open loop, latency from each op's intended start)"

const capacityLede = "A step is sustained when it achieves at least 99% of its offered rate, its backlog of due but unsent ops does not grow over its last half, and its errors stay within the budget; the search ramps up geometrically until a step misses, bisects to within the stated precision and reports only a rate whose confirmation step passed. \"≥\" marks a capacity the client's CPU, not the store, may have bounded, or the search's highest rate. Bounded by: what limited the step that missed above the capacity (or the lowest step when none was found), from its evidence: the client's CPU, platform stalls (the hiccup meter saw wake-ups at least half as late as the objective: the SLO measures the machine), the client's scheduling (ops started late while it had CPU to spare), or the store."

// newCapacityModel builds the section; nil without a capacity cell.
// colorOf gives each target its colour on the HTML page (nil elsewhere).
func newCapacityModel(r *result.Result, colorOf map[string]int) *capacityModel {
	cells := cellsWith(r, capacityOf)
	if len(cells) == 0 {
		return nil
	}
	m := &capacityModel{summary: newTable("capacity", "capacity at each SLO, and its cost", true,
		column{head: "cell", left: true}, column{head: "SLO", left: true}, column{head: "capacity ops/s", m: "capacity_ops_s"},
		column{head: "bounded by", left: true}, column{head: "p50 µs", m: "p50"}, column{head: "p99 µs", m: "p99"},
		column{head: "client CPU µs/op", m: "client_cpu_us_per_op"}, column{head: "server CPU µs/op", m: "server_cpu_us_per_op"},
		column{head: "need ops/s", m: "need_ops_s"}, column{head: "cores needed (extrapolated)", m: "cores_needed_extrapolated"})}
	for _, c := range cells {
		s := capacityOf(c)
		for _, cp := range s.Capacity {
			m.summary.add(capacityRow(c.Label(), s, cp)...)
			m.reasons = append(m.reasons, fmt.Sprintf("%s, %s: %s", c.Label(), sloText(s, cp.SLO), cp.Reason))
			if k := cp.Cost; k != nil {
				m.costs = append(m.costs, fmt.Sprintf("%s, %s: %s µs of CPU per op × %s ops/s = %s cores (extrapolated; %s)",
					c.Label(), sloText(s, cp.SLO), num(k.CPUUsPerOp), whole(k.NeedOpsS), fixed(k.CoresNeededExtrapolated, 2), k.Basis)+beyondText(k))
			}
		}
		m.knees = append(m.knees, capacityKnee{label: c.Label(), chart: kneeChart(c, s, colorOf)})
	}
	m.usl = uslTable(cells)
	m.repeats = capacitySpreadTable(cells)
	return m
}

func sloText(s *capacity.Summary, i int) string {
	if i >= 0 && i < len(s.SLOs) {
		return s.SLOs[i].Text
	}
	return "—"
}

func beyondText(k *capacity.Cost) string {
	if k.BeyondCapacity {
		return "; the need exceeds the capacity: one instance cannot carry it at this SLO, whatever its cores"
	}
	return ""
}

// capacityText is a capacity for a table: "7,300", "≥ 7,300", "none
// confirmed (32,000 passed once)" or "none (lowest tried 2,000)".
func capacityText(cp capacity.Capacity) cell {
	switch {
	case !cp.Found && cp.PassedOnceOpsS > 0:
		return textCell("none confirmed (" + whole(cp.PassedOnceOpsS) + " passed once)")
	case !cp.Found:
		return textCell("none (lowest tried " + whole(cp.LowestTriedOpsS) + ")")
	}
	text := whole(cp.OpsS)
	if cp.AtLeast {
		text = "≥ " + text
	}
	if cp.Speed > 0 { // a search over a trace: the rate as a speed factor of it
		text += " (" + fixed(cp.Speed, 2) + "× the trace)"
	}
	return figureCell(text, cp.OpsS)
}

func capacityRow(label string, s *capacity.Summary, cp capacity.Capacity) []cell {
	none := textCell("—")
	bound := "—"
	if cp.Limiter != "" {
		bound = cp.Limiter
	}
	row := []cell{textCell(label), textCell(sloText(s, cp.SLO)), capacityText(cp), textCell(bound)}
	if !cp.Found {
		return append(row, none, none, none, none, none, none)
	}
	server := none
	if cp.ServerCPUUs > 0 {
		server = figureCell(num(cp.ServerCPUUs), cp.ServerCPUUs)
	}
	need, cores := none, none
	if k := cp.Cost; k != nil {
		need = figureCell(whole(k.NeedOpsS), k.NeedOpsS)
		cores = figureCell(fixed(k.CoresNeededExtrapolated, 2), k.CoresNeededExtrapolated)
	}
	return append(row, figureCell(us(cp.P50Us), cp.P50Us), figureCell(us(cp.P99Us), cp.P99Us),
		figureCell(num(cp.ClientCPUUs), cp.ClientCPUUs), server, need, cores)
}

const capacityRepeatsTitle = "capacity over the repeats (--repeat): median, range, spread = (high − low) ÷ median; unstable beyond 20%"

const capacityRepeatsLede = "Each repeat searched on its own. The range from the lowest to the highest capacity holds the true median with the confidence shown (1 − 2·0.5^n for n repeats, order statistics). Repeats that differ by more than 20% of their median are unstable: the verdict names what bounded each and what the platform did at the step that bounded it (the kernel moving client and server between CPUs, stalls half as late as the bound, other processes' load), so a machine that moved the answer says so; client-limited repeats are lower bounds, so the store carried at least the highest."

// uslCaption is the USL table's caption, and its title in the terminal.
const uslCaption = "Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted to closed-loop throughput: a fit, not a measurement"

// uslLede says what the USL table's parameters mean.
const uslLede = "σ is contention (the share of work that serializes), κ coherency (the cost of keeping clients' views consistent, which makes throughput fall past the peak). The fit's peak is a model's prediction beside the measured capacity, not a measurement."

// uslTable is each cell's USL fit beside its measured capacity; nil when no
// cell has one.
func uslTable(cells []*result.Cell) *table {
	t := newTable("capacity-usl", uslCaption, true,
		column{head: "cell", left: true}, column{head: "clients", left: true}, column{head: "λ ops/s", m: "lambda_ops_s"},
		column{head: "σ contention", m: "sigma"}, column{head: "κ coherency", m: "kappa"},
		column{head: "fit peak clients", m: "peak_clients"}, column{head: "fit peak ops/s", m: "peak_ops_s"},
		column{head: "measured capacity ops/s", m: "capacity_ops_s"}, column{head: "fit error ops/s", m: "rmse_ops_s"}, column{head: "note", left: true})
	for _, c := range cells {
		s := capacityOf(c)
		f := s.USL
		if f == nil {
			continue
		}
		var ns []string
		for _, p := range f.Points {
			ns = append(ns, strconv.Itoa(p.Clients))
		}
		peakN, peakX := textCell("none"), textCell("none")
		if f.PeakClients > 0 {
			peakN, peakX = figureCell(num(f.PeakClients), f.PeakClients), figureCell(whole(f.PeakOpsS), f.PeakOpsS)
		}
		measured := textCell("none")
		for _, cp := range s.Capacity {
			if cp.Found {
				measured = capacityText(cp)
				break
			}
		}
		note := f.Note
		if note == "" {
			note = "—"
		}
		t.add(textCell(c.Label()), textCell(strings.Join(ns, ", ")), figureCell(whole(f.Lambda), f.Lambda),
			figureCell(fixed(f.Sigma, 4), f.Sigma), figureCell(fixed(f.Kappa, 6), f.Kappa), peakN, peakX, measured,
			figureCell(whole(f.RMSE), f.RMSE), textCell(note))
	}
	return t.orNil()
}

// kneePercentiles are the percentiles a cell's knee curve draws: p50, p99
// and every SLO's, in increasing order.
func kneePercentiles(s *capacity.Summary) []float64 {
	ps := []float64{50, 99}
	for _, slo := range s.SLOs {
		for _, o := range slo.Objectives {
			if !slices.Contains(ps, o.Percentile) {
				ps = append(ps, o.Percentile)
			}
		}
	}
	slices.Sort(ps)
	return ps
}

// stepPercentile is a step's value of percentile p, from its SLO's
// figures or its own p50 and p99.
func stepPercentile(st capacity.Step, p float64) (capacity.Percentile, bool) {
	for _, pc := range st.Percentiles {
		if pc.Percentile == p {
			return pc, true
		}
	}
	switch p {
	case 50:
		return capacity.Percentile{Percentile: 50, ValueUs: st.P50Us}, st.Ops > 0
	case 99:
		return capacity.Percentile{Percentile: 99, ValueUs: st.P99Us}, st.Ops > 0
	}
	return capacity.Percentile{}, false
}

func pctName(p float64) string { return "p" + shortest(p) }

// kneeChart is a cell's latency percentiles against offered rate, a line
// per percentile, the SLO's bounds as dashed horizontal lines and each
// capacity as a vertical one; its table lists every step.
func kneeChart(c *result.Cell, s *capacity.Summary, colorOf map[string]int) *lineChartSpec {
	ps := kneePercentiles(s)
	cols := []column{{head: "step", left: true}, {head: "stage", left: true}, {head: "SLO", left: true},
		{head: "offered ops/s", m: "offered_ops_s"}, {head: "achieved ops/s", m: "achieved_ops_s"}, {head: "s", m: "duration_s"}}
	for _, p := range ps {
		cols = append(cols, column{head: pctName(p) + " µs", m: pctName(p)})
	}
	cols = append(cols, column{head: "interval / bound", left: true}, column{head: "backlog slope /s", m: "backlog_slope"},
		column{head: "on one CPU client/server", left: true}, column{head: "CPUs busy", left: true}, column{head: "verdict", left: true})
	t := newTable("capacity-steps", c.Label()+": every step of the search, in the order run (interval: the SLO percentiles' 95% confidence interval width over their bound)", true, cols...)
	order := make([]int, len(s.Steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s.Steps[order[a]].OfferedOpsS < s.Steps[order[b]].OfferedOpsS })
	for i, st := range s.Steps {
		row := []cell{textCell(strconv.Itoa(i + 1)), textCell(st.Stage), textCell(sloText(s, st.SLO)),
			figureCell(whole(st.OfferedOpsS), st.OfferedOpsS), figureCell(whole(st.AchievedOpsS), st.AchievedOpsS), figureCell(shortest(math.Round(st.DurationS*10)/10), st.DurationS)}
		for _, p := range ps {
			if pc, ok := stepPercentile(st, p); ok {
				row = append(row, figureCell(us(pc.ValueUs), pc.ValueUs))
			} else {
				row = append(row, textCell("—"))
			}
		}
		var widths []string
		for _, pc := range st.Percentiles {
			w := fixed(100*pc.WidthShare, 1) + "%"
			if pc.Open {
				w = "open"
			}
			widths = append(widths, pctName(pc.Percentile)+" "+w)
		}
		// How much of each side's CPU time was on the CPU it used most:
		// where the kernel moved them, a rate that passed can miss.
		placed := "—"
		if st.Placed() {
			placed = fmt.Sprintf("%.0f%%/%.0f%%", 100*st.ClientMainCPU, 100*st.ServerMainCPU)
		}
		// How full the run's CPUs were: on a full machine the same rate
		// passes or misses by chance.
		busy := "—"
		if st.MachineCPUs > 0 {
			busy = machineBusyText(&st)
		}
		row = append(row, textCell(strings.Join(widths, ", ")), figureCell(fixed(st.BacklogSlope, 1), st.BacklogSlope), textCell(placed), textCell(busy), textCell(st.Verdict))
		t.add(row...)
	}
	spec := &lineChartSpec{id: "chart-capacity-" + idUnsafe.ReplaceAllString(c.Label(), "-"), table: t,
		title:  c.Label() + ": latency against offered rate",
		sub:    "each step's percentiles from the intended starts, a line per percentile; dashed: the SLO's bounds; the vertical line: the capacity found",
		desc:   fmt.Sprintf("Line chart of latency percentiles (%s) against the offered rate over %s, with each SLO bound as a horizontal line and each capacity found as a vertical one.", pctList(ps), plural(len(s.Steps), "step")),
		xLabel: "offered ops/s", yLabel: "latency µs", yLog: true, xFmt: countLabel, yFmt: usLabel}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k, p := range ps {
		l := line{key: pctName(p), color: colorOf[c.Target], variant: k, markers: true}
		for _, i := range order {
			st := s.Steps[i]
			if pc, ok := stepPercentile(st, p); ok && pc.ValueUs > 0 {
				l.points = append(l.points, point{x: st.OfferedOpsS, y: pc.ValueUs,
					title: fmt.Sprintf("%s at %s ops/s offered: %s µs (%s)", pctName(p), whole(st.OfferedOpsS), us(pc.ValueUs), st.Verdict)})
				xlo, xhi = min(xlo, st.OfferedOpsS), max(xhi, st.OfferedOpsS)
				ylo, yhi = min(ylo, pc.ValueUs), max(yhi, pc.ValueUs)
			}
		}
		spec.lines = append(spec.lines, l)
	}
	if math.IsInf(xlo, 1) {
		return spec
	}
	ref := paletteSize - 1
	for _, slo := range s.SLOs {
		for _, o := range slo.Objectives {
			key := "SLO " + pctName(o.Percentile) + " ≤ " + usLabel(o.MaxUs)
			spec.lines = append(spec.lines, line{key: key, color: ref, variant: 2,
				points: []point{{x: xlo, y: o.MaxUs, title: "SLO " + slo.Text}, {x: xhi, y: o.MaxUs, title: "SLO " + slo.Text}}})
			ylo, yhi = min(ylo, o.MaxUs), max(yhi, o.MaxUs)
		}
	}
	for _, cp := range s.Capacity {
		if !cp.Found {
			continue
		}
		what := "capacity " + whole(cp.OpsS)
		if cp.AtLeast {
			what = "capacity ≥ " + whole(cp.OpsS)
		}
		what += " ops/s at " + sloText(s, cp.SLO)
		spec.lines = append(spec.lines, line{key: what, color: ref, variant: 1,
			points: []point{{x: cp.OpsS, y: ylo, title: what}, {x: cp.OpsS, y: yhi, title: what}}})
	}
	return spec
}

func pctList(ps []float64) string {
	var names []string
	for _, p := range ps {
		names = append(names, pctName(p))
	}
	return strings.Join(names, ", ")
}

// CapacityText prints the capacity section for the terminal: the capacity
// at each SLO and its cost, why each is what it is, the USL fit, and every
// cell's steps; nothing without a capacity cell.
func CapacityText(w io.Writer, r *result.Result) { sectionText(w, r, "capacity") }

// text prints the section for the terminal.
func (m *capacityModel) text(w io.Writer) {
	m.summary.textUnder(w, capacityTitle)
	for _, l := range m.reasons {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, l := range m.costs {
		fmt.Fprintf(w, "  cost: %s\n", l)
	}
	m.repeats.textUnder(w, capacityRepeatsTitle)
	m.usl.textUnder(w, uslCaption)
	for _, k := range m.knees {
		k.chart.table.textUnder(w, "knee curve, "+k.chart.table.caption)
	}
}

// render writes the section to Markdown or HTML.
func (m *capacityModel) render(d doc) {
	d.para(capacityLede)
	d.table(m.summary)
	d.list(m.reasons)
	if len(m.costs) > 0 {
		d.heading("", "Cost at capacity (an extrapolation)")
		d.para("Cores needed = measured CPU µs per op at capacity × the needed rate ÷ 10^6: an extrapolation from one measurement, which assumes the CPU per op stays what it was at capacity.")
		d.list(m.costs)
	}
	subsectionTable(d, "Over the repeats", capacityRepeatsLede, m.repeats)
	subsectionTable(d, "Scalability fit (USL, a fit)", uslLede, m.usl)
	for _, k := range m.knees {
		d.heading("", "Knee curve: "+k.label)
		d.lineChart(k.chart)
	}
}
