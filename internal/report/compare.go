package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// Compare rule.
//
// Cells are matched across runs by cell id (target/workload/param=value…),
// phases by name. For each matched phase and each metric (ops/s, mean, p50,
// p90, p99, p99.9), Compare prints each run's value, the ratio to the first
// run (the baseline) and a verdict: "better", "worse", or "no clear
// difference" when the two runs' own spreads overlap — that is, when the
// difference is no larger than what either run's own variation explains.
//
// A run's spread for a metric is an interval:
//
//   - A cell repeated in a run (the same cell id more than once): the value
//     is the median of the repeats and the interval is their min..max. This
//     is the best evidence, as it includes run-to-run noise.
//   - Otherwise, a 99% confidence interval from the phase's own data:
//     percentiles: the distribution-free interval of a quantile, by rank in
//     the decoded HdrHistogram: ranks n·q ± 2.576·√(n·q·(1−q)), widened to
//     whole histogram buckets, ends included (so two values the histogram
//     cannot tell apart, in one bucket or either side of a boundary, overlap); mean: ±2.576·σ/√n; ops/s: the mean latency's relative
//     interval (closed loop: throughput ∝ 1/mean), widened, for phases of 3
//     or more whole seconds, to the 99% t-interval of the per-second rates.
//
// A single run cannot see run-to-run noise (a different page cache, another
// process on the machine), so with one cell per run "better" and "worse"
// mean "beyond this run's sampling noise": repeat cells, or runs, to be sure.

// CompareRun is one result given to Compare.
type CompareRun struct {
	Name string // "A", "B", …
	Path string
	R    *result.Result
}

// compareZ is the normal quantile of a two-sided 99% interval.
const compareZ = 2.5758293035489

// compareMetrics are the figures compared, in order.
var compareMetrics = []struct {
	key, name  string
	higherIsOK bool
}{
	{"ops_s", "ops/s", true},
	{"mean", "mean µs", false},
	{"p50", "p50 µs", false},
	{"p90", "p90 µs", false},
	{"p99", "p99 µs", false},
	{"p999", "p99.9 µs", false},
}

// Verdicts.
const (
	VerdictSame    = "no clear difference"
	VerdictBetter  = "better"
	VerdictWorse   = "worse"
	VerdictUnknown = "spread unknown"
)

// interval is a run's value of a metric and its spread.
type interval struct {
	v, lo, hi float64
	known     bool
}

// ComparisonRow is one metric of one matched cell phase.
type ComparisonRow struct {
	Cell, Phase, Metric string
	Base, Other         float64
	Ratio               float64 // Other / Base
	Verdict             string
	BaseLo, BaseHi      float64
	OtherLo, OtherHi    float64
	// SpeedBase and SpeedOther are the runs' CPU speed over the phase: the
	// median time of the hiccup probes' speed loop (ns, higher is slower),
	// 0 where a run did not measure it (--no-hiccup, older results).
	SpeedBase, SpeedOther float64
}

// speedDiffers is the change in the probes' speed loop from which compare
// says the machine ran at another speed: the loop's medians moved within
// ±5% from phase to phase of one quiet run (AMD EPYC VM, 2026-11-28).
const speedDiffers = 1.10

// Slowdown is how many times slower the other run's CPUs ran than the
// baseline's over the phase (above 1: slower); 0 when either run did not
// measure it.
func (r ComparisonRow) Slowdown() float64 {
	if r.SpeedBase <= 0 || r.SpeedOther <= 0 {
		return 0
	}
	return r.SpeedOther / r.SpeedBase
}

// Comparison is one run against the baseline.
type Comparison struct {
	Base, Other CompareRun
	Rows        []ComparisonRow
	OnlyBase    []string // cell ids only in the baseline
	OnlyOther   []string // cell ids only in the other run
	NotCompared []string // matched cell ids that failed in one run
	SetupDiffs  []string // environment, versions and settings that differ
	// ParamDiffs are the parameters that differ between matched cells
	// (clients, rate, rtt, stall ...): cells are matched by id, which names
	// the data set and the design but not the load, so a reader must see
	// when two matched cells were not run alike.
	ParamDiffs []string
}

// Compare matches the cells of each run against the first.
func Compare(runs []CompareRun) []Comparison {
	var out []Comparison
	for _, o := range runs[1:] {
		out = append(out, compareTwo(runs[0], o))
	}
	return out
}

// cellsByID groups a run's cells by id, keeping the first appearance order.
func cellsByID(r *result.Result) (ids []string, by map[string][]*result.Cell) {
	by = map[string][]*result.Cell{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if _, ok := by[c.ID]; !ok {
			ids = append(ids, c.ID)
		}
		by[c.ID] = append(by[c.ID], c)
	}
	return ids, by
}

func okCells(cs []*result.Cell) []*result.Cell {
	var out []*result.Cell
	for _, c := range cs {
		if c.Status == result.CellOK {
			out = append(out, c)
		}
	}
	return out
}

func compareTwo(a, b CompareRun) Comparison {
	cmp := Comparison{Base: a, Other: b}
	aIDs, aBy := cellsByID(a.R)
	bIDs, bBy := cellsByID(b.R)
	params := paramDiffs{}
	for _, id := range aIDs {
		bc, ok := bBy[id]
		if !ok {
			cmp.OnlyBase = append(cmp.OnlyBase, id)
			continue
		}
		ac, bc := okCells(aBy[id]), okCells(bc)
		if len(ac) == 0 || len(bc) == 0 {
			cmp.NotCompared = append(cmp.NotCompared, id)
			continue
		}
		params.add(id, ac[0].Params, bc[0].Params)
		steps := capacityOf(ac[0]).StepPhases()
		for _, ph := range ac[0].Phases {
			if steps[ph.Name] {
				continue // a capacity search's step: compared as the capacity it bounded (capacityRows)
			}
			ap, bp := phasesNamed(ac, ph.Name), phasesNamed(bc, ph.Name)
			if len(bp) == 0 {
				continue
			}
			// How the client waited for replies changes its cost per op.
			params.differ(id, "client I/O ("+ph.Name+")", noneIfEmpty(ap[0].ClientIO), noneIfEmpty(bp[0].ClientIO))
			from := len(cmp.Rows)
			cmp.Rows = append(cmp.Rows, compareRows(id, ph.Name, ap, bp)...)
			// A mixed phase's kinds (gets and sets) each on their own: the
			// phase's figures can stay while one kind got slower.
			for _, kind := range sortedKeys(ph.ByOp) {
				ak, bk := kindPhases(ap, kind), kindPhases(bp, kind)
				if len(ak) > 0 && len(bk) > 0 {
					cmp.Rows = append(cmp.Rows, compareRows(id, ph.Name+" "+kind, ak, bk)...)
				}
			}
			sa, sb := machineSpeed(ap), machineSpeed(bp)
			for i := from; i < len(cmp.Rows); i++ {
				cmp.Rows[i].SpeedBase, cmp.Rows[i].SpeedOther = sa, sb
			}
		}
		cmp.Rows = append(cmp.Rows, capacityRows(id, ac, bc)...)
	}
	for _, id := range bIDs {
		if _, ok := aBy[id]; !ok {
			cmp.OnlyOther = append(cmp.OnlyOther, id)
		}
	}
	cmp.SetupDiffs = setupDiffs(a.R, b.R)
	if d := speedDiff(a.Name, b.Name, cmp.Rows); d != "" {
		cmp.SetupDiffs = append(cmp.SetupDiffs, d)
	}
	cmp.ParamDiffs = params.lines()
	return cmp
}

// machineSpeed is the median over phases (a cell's repeats) of the hiccup
// probes' speed loop, ns; 0 when no phase measured it (or not sanely).
func machineSpeed(ps []*metrics.Phase) float64 {
	var xs []float64
	for _, p := range ps {
		if p.Hiccup != nil && speedKnown(p.Hiccup.All.SpeedNs) {
			xs = append(xs, p.Hiccup.All.SpeedNs)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	return sortedMedian(xs)
}

// speedsApart says a slowdown x (Slowdown) is one: the two runs' CPUs ran
// speedDiffers or more apart, either way.
func speedsApart(x float64) bool { return x >= speedDiffers || (x > 0 && x <= 1/speedDiffers) }

// speedKnown says ns is a speed loop's figure: a loop of ~1,000 cycles
// takes ns to µs, so outside 1 ns to 1 s (or unmeasured, 0) it is not one.
func speedKnown(ns float64) bool { return ns >= 1 && ns <= 1e9 }

// speedDiff says when the two runs' CPUs ran at speeds apart by
// speedDiffers or more over their matched phases (the medians of each
// run's phases), "" otherwise: the figures that moved with it measure the
// machine, not the change.
func speedDiff(a, b string, rows []ComparisonRow) string {
	var sa, sb []float64
	seen := map[string]bool{}
	for _, r := range rows {
		k := r.Cell + "\x00" + r.Phase
		if r.Slowdown() == 0 || seen[k] {
			continue
		}
		seen[k] = true
		sa, sb = append(sa, r.SpeedBase), append(sb, r.SpeedOther)
	}
	if len(sa) == 0 {
		return ""
	}
	sort.Float64s(sa)
	sort.Float64s(sb)
	ma, mb := sortedMedian(sa), sortedMedian(sb)
	x := mb / ma
	if !speedsApart(x) {
		return ""
	}
	how := fmt.Sprintf("%.2f× slower", x)
	if x < 1 {
		how = fmt.Sprintf("%.2f× faster", 1/x)
	}
	return fmt.Sprintf("CPU speed: the hiccup probes' speed loop took %.0f ns in %s, %.0f ns in %s (median over the matched phases): %s's CPUs ran %s, and figures that moved with them measure the machine, not the change", ma, a, mb, b, b, how)
}

// paramDiffs gathers, per differing parameter value pair, the matched cells
// that show it, so one flag changed between runs is one line, not one per cell.
type paramDiffs struct {
	order   []string
	cells   map[string][]string
	matched int
}

func (d *paramDiffs) add(id string, a, b map[string]any) {
	d.matched++
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		d.differ(id, k, paramText(a, k), paramText(b, k))
	}
}

// differ notes that cell id's k went from x to y, if it did.
func (d *paramDiffs) differ(id, k, x, y string) {
	if x == y {
		return
	}
	line := fmt.Sprintf("%s: %s → %s", k, x, y)
	if d.cells == nil {
		d.cells = map[string][]string{}
	}
	if _, ok := d.cells[line]; !ok {
		d.order = append(d.order, line)
	}
	d.cells[line] = append(d.cells[line], id)
}

// lines names the cells of each difference, or says it was every matched one.
func (d *paramDiffs) lines() []string {
	var out []string
	for _, line := range d.order {
		ids := d.cells[line]
		switch {
		case len(ids) == d.matched:
			line += fmt.Sprintf(" (all %d matched cells)", d.matched)
		case len(ids) <= 3:
			line += " (" + strings.Join(ids, ", ") + ")"
		default:
			line += fmt.Sprintf(" (%d of %d matched cells, e.g. %s)", len(ids), d.matched, ids[0])
		}
		out = append(out, line)
	}
	return out
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// paramText prints a parameter as recorded (JSON numbers come back as
// float64; printed exactly, without a needless ".0"; see shortest).
func paramText(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "(none)"
	}
	if f, ok := v.(float64); ok {
		return shortest(f)
	}
	return fmt.Sprint(v)
}

// compareRows compares one phase (or one kind of a phase's operations) of
// the base run's cells with the other's, metric by metric.
func compareRows(id, phase string, ap, bp []*metrics.Phase) []ComparisonRow {
	var rows []ComparisonRow
	for _, m := range compareMetrics {
		x, y := spread(ap, m.key), spread(bp, m.key)
		row := ComparisonRow{Cell: id, Phase: phase, Metric: m.name, Base: x.v, Other: y.v,
			BaseLo: x.lo, BaseHi: x.hi, OtherLo: y.lo, OtherHi: y.hi, Ratio: math.NaN()}
		if x.v != 0 {
			row.Ratio = y.v / x.v
		}
		row.Verdict = verdict(x, y, m.higherIsOK)
		rows = append(rows, row)
	}
	return rows
}

// kindPhases are the figures of one kind of operation of phases, each as a
// phase of its own (no per-second series: its ops/s interval comes from
// the latency alone), for the phases that recorded that kind.
func kindPhases(phases []*metrics.Phase, kind string) []*metrics.Phase {
	var out []*metrics.Phase
	for _, p := range phases {
		f, ok := p.ByOp[kind]
		if !ok {
			continue
		}
		out = append(out, &metrics.Phase{Name: p.Name + " " + kind, Workers: p.Workers, Ops: f.Ops, Errors: f.Errors,
			DurationS: p.DurationS, ThroughputOpsS: f.ThroughputOpsS, LatencyUs: f.LatencyUs,
			Histogram: f.Histogram, HistogramUnit: p.HistogramUnit})
	}
	return out
}

func phasesNamed(cells []*result.Cell, name string) []*metrics.Phase {
	var out []*metrics.Phase
	for _, c := range cells {
		for i := range c.Phases {
			if c.Phases[i].Name == name {
				out = append(out, &c.Phases[i])
			}
		}
	}
	return out
}

func verdict(a, b interval, higherIsOK bool) string {
	switch {
	case a.v == b.v:
		return VerdictSame
	case !a.known || !b.known:
		return VerdictUnknown
	case a.lo <= b.hi && b.lo <= a.hi:
		return VerdictSame
	case (b.v > a.v) == higherIsOK:
		return VerdictBetter
	}
	return VerdictWorse
}

// metricValue reads one compared figure of a phase.
func metricValue(p *metrics.Phase, key string) float64 {
	l := p.LatencyUs
	switch key {
	case "ops_s":
		return p.ThroughputOpsS
	case "mean":
		return l.Mean
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p99":
		return l.P99
	case "p999":
		return l.P999
	}
	return math.NaN()
}

var metricQuantile = map[string]float64{"p50": 0.50, "p90": 0.90, "p99": 0.99, "p999": 0.999}

// spread is a run's value of a metric with its interval; see "Compare rule".
func spread(ps []*metrics.Phase, key string) interval {
	if len(ps) >= 2 {
		return repeatsSpread(ps, key)
	}
	p := ps[0]
	v := metricValue(p, key)
	switch key {
	case "p50", "p90", "p99", "p999":
		lo, hi, ok := quantileInterval(p, metricQuantile[key])
		if !ok {
			return interval{v: v}
		}
		return interval{v: v, lo: math.Min(lo, v), hi: math.Max(hi, v), known: true}
	case "mean":
		lo, hi, ok := meanInterval(p)
		return interval{v: v, lo: lo, hi: hi, known: ok}
	case "ops_s":
		mlo, mhi, ok := meanInterval(p)
		if !ok || p.LatencyUs.Mean <= 0 || mlo <= 0 {
			return interval{v: v}
		}
		// Throughput scales inversely with the mean latency at a fixed concurrency.
		lo, hi := v*p.LatencyUs.Mean/mhi, v*p.LatencyUs.Mean/mlo
		if rates := wholeSecondRates(p); len(rates) >= seriesMinSeconds {
			sd := stddev(rates)
			h := tQuantile99(len(rates)-1) * sd / math.Sqrt(float64(len(rates)))
			lo, hi = math.Min(lo, v-h), math.Max(hi, v+h)
		}
		return interval{v: v, lo: lo, hi: hi, known: true}
	}
	return interval{v: v}
}

// repeatsSpread is the median of a cell's repeats and their range.
func repeatsSpread(ps []*metrics.Phase, key string) interval {
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = metricValue(p, key)
	}
	sort.Float64s(vs)
	med := sortedMedian(vs)
	lo, hi := bootstrapMedian(vs)
	return interval{v: med, lo: math.Min(lo, med), hi: math.Max(hi, med), known: true}
}

// sortedMedian is the median of sorted, a non-empty sorted slice.
func sortedMedian(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 0 {
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return sorted[n/2]
}

// bootstrapMedian is the exact bootstrap 99% percentile interval of the
// median of sorted repeats: a resample's (lower) median is its k-th order
// statistic, k = ⌈n/2⌉, and P(it is at most x_(j)) = P(Binomial(n, j/n) ≥
// k), so no random resampling is needed and the interval is the same on
// every run. Up to 8 repeats it is their whole range; with more it
// narrows as the median's own uncertainty does.
func bootstrapMedian(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	k := (n + 1) / 2
	const tail = 0.005
	lo, hi = sorted[0], sorted[n-1]
	for j := 1; j <= n; j++ {
		if atLeast(n, k, float64(j)/float64(n)) > tail {
			lo = sorted[j-1]
			break
		}
	}
	for j := n; j >= 1; j-- {
		if atLeast(n, k, float64(j-1)/float64(n)) < 1-tail {
			hi = sorted[j-1]
			break
		}
	}
	return lo, hi
}

// atLeast is P(Binomial(n, p) ≥ k).
func atLeast(n, k int, p float64) float64 {
	var sum float64
	for i := k; i <= n; i++ {
		sum += binomial(n, i) * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
	}
	return sum
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// runValue is a run's value of a metric for a matched cell's phase: the
// median of its repeats, as spread has it, without spread's interval.
func runValue(ps []*metrics.Phase, key string) float64 {
	if len(ps) == 1 {
		return metricValue(ps[0], key)
	}
	return repeatsSpread(ps, key).v
}

// successes is the number of operations the latency figures cover.
func successes(p *metrics.Phase) int64 { return p.Ops - errorCount(p) }

// meanInterval is mean ± 2.576·σ/√n, kept within the exact min and max: a
// heavy tail can make the half-width larger than the mean, and a mean below
// the fastest op (or a negative one) means nothing.
func meanInterval(p *metrics.Phase) (lo, hi float64, ok bool) {
	n := successes(p)
	if n <= 0 {
		return 0, 0, false
	}
	half := compareZ * p.LatencyUs.Stddev / math.Sqrt(float64(n))
	m := p.LatencyUs.Mean
	lo, hi = math.Max(m-half, p.LatencyUs.Min), m+half
	if p.LatencyUs.Max > 0 {
		hi = math.Min(hi, p.LatencyUs.Max)
	}
	return math.Min(lo, m), math.Max(hi, m), true
}

// quantileInterval is the 99% distribution-free confidence interval of
// quantile q from the phase's histogram, in µs, widened to whole buckets.
func quantileInterval(p *metrics.Phase, q float64) (lo, hi float64, ok bool) {
	if p.Histogram == "" {
		return 0, 0, false
	}
	h, err := metrics.DecodeHistogram(p.Histogram)
	if err != nil || h.TotalCount() == 0 {
		return 0, 0, false
	}
	n := float64(h.TotalCount())
	half := compareZ * math.Sqrt(n*q*(1-q))
	rlo := int64(math.Max(1, math.Floor(n*q-half)))
	rhi := int64(math.Min(n, math.Ceil(n*q+half)))
	var seen int64
	loSet := false
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		seen += b.Count
		if !loSet && seen >= rlo {
			lo, loSet = float64(b.From), true
		}
		if seen >= rhi {
			// A bucket holds [From, To+1): values just either side of the
			// boundary of two adjacent buckets cannot be told apart.
			hi = float64(b.To + 1)
			break
		}
	}
	return lo / 1e3, hi / 1e3, loSet
}

// wholeSecondRates are the ops of each whole second of a phase (the last,
// partial second left out).
func wholeSecondRates(p *metrics.Phase) []float64 {
	var out []float64
	for _, s := range p.Series {
		if float64(s.T+1) <= p.DurationS {
			out = append(out, float64(s.Ops))
		}
	}
	return out
}

// stddev is the sample standard deviation.
func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var mean, ss float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// tQuantile99 is Student's t for a two-sided 99% interval with df degrees of
// freedom (rounded to the next tabulated df below: conservative).
func tQuantile99(df int) float64 {
	table := []float64{0, 63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
		3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
		2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750}
	switch {
	case df < 1:
		return math.Inf(1)
	case df < len(table):
		return table[df]
	case df < 40:
		return 2.750
	case df < 60:
		return 2.704
	case df < 120:
		return 2.660
	}
	return 2.617
}

// runSpecific are parts of a setting's value that differ from run to run
// without meaning anything: temporary directories and ports.
var runSpecific = regexp.MustCompile(`storebench-[a-z]+-[0-9]+|127\.0\.0\.1:[0-9]+`)

// ignoredSettings differ between any two runs of managed servers.
var ignoredSettings = map[string]bool{"port": true, "tcpport": true, "udpport": true, "pid_file": true, "unix_socket_directories": true}

// setupDiff is one thing that differs between two runs' setups.
type setupDiff struct {
	kind     diffKind
	target   string // the target, for a version, durability or setting
	key      string // "CPU", "version", "appendfsync"
	from, to string
}

// what names the difference: "CPU", "redis version", "redis appendfsync".
func (d setupDiff) what() string {
	if d.target == "" {
		return d.key
	}
	return d.target + " " + d.key
}

// diffKind says what part of the setup a setupDiff is.
type diffKind int

const (
	diffMachine diffKind = iota
	diffCPU              // the CPU model or the cores: the machine as history marks it
	diffStorebench
	diffSeed
	diffVersion
	diffDurability
	diffSetting
)

func (d setupDiff) String() string {
	return fmt.Sprintf("%s: %s → %s", d.what(), orNone(d.from), orNone(d.to))
}

// setupDiffs lists what differs between two runs' machines, binaries and targets.
func setupDiffs(a, b *result.Result) []string {
	var out []string
	for _, d := range setupDiffList(a, b) {
		out = append(out, d.String())
	}
	return out
}

// setupDiffList is what differs between two runs' machines, binaries and
// targets (the targets both runs have), in that order.
func setupDiffList(a, b *result.Result) []setupDiff {
	var out []setupDiff
	diff := func(kind diffKind, target, key, x, y string) {
		if x != y {
			out = append(out, setupDiff{kind: kind, target: target, key: key, from: x, to: y})
		}
	}
	ea, eb := a.Environment, b.Environment
	diff(diffMachine, "", "host", ea.Hostname, eb.Hostname)
	diff(diffCPU, "", "CPU", ea.CPUModel, eb.CPUModel)
	diff(diffCPU, "", "cores", fmt.Sprint(ea.Cores), fmt.Sprint(eb.Cores))
	diff(diffMachine, "", "OS", ea.OS, eb.OS)
	diff(diffMachine, "", "kernel", ea.Kernel, eb.Kernel)
	diff(diffMachine, "", "GOMAXPROCS", fmt.Sprint(ea.GoMaxProcs), fmt.Sprint(eb.GoMaxProcs))
	diff(diffMachine, "", "client CPUs", ea.ClientCPUs, eb.ClientCPUs)
	diff(diffMachine, "", "server CPUs", ea.ServerCPUs, eb.ServerCPUs)
	diff(diffStorebench, "", "storebench", a.Storebench.Version+" "+a.Storebench.Commit, b.Storebench.Version+" "+b.Storebench.Commit)
	diff(diffSeed, "", "seed", fmt.Sprint(a.Seed), fmt.Sprint(b.Seed))
	tb := map[string]result.Target{}
	for _, t := range b.Targets {
		tb[t.Name] = t
	}
	for _, t := range a.Targets {
		u, ok := tb[t.Name]
		if !ok {
			continue
		}
		diff(diffVersion, t.Name, "version", t.Version, u.Version)
		diff(diffDurability, t.Name, "durability", t.Durability, u.Durability)
		norm := func(tg result.Target, v string) string {
			if tg.Namespace != "" {
				v = strings.ReplaceAll(v, tg.Namespace, "<namespace>")
			}
			return runSpecific.ReplaceAllString(v, "<run>")
		}
		keys := map[string]bool{}
		for k := range t.Settings {
			keys[k] = true
		}
		for k := range u.Settings {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			if ignoredSettings[k] {
				continue
			}
			x, xok := t.Settings[k]
			y, yok := u.Settings[k]
			if xok != yok || norm(t, x) != norm(u, y) {
				diff(diffSetting, t.Name, k, x, y)
			}
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ratioText prints a ratio: 0.98×, 12.4×.
func ratioText(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "—"
	}
	return num(r) + "×"
}

func intervalText(lo, hi float64, known bool) string {
	if !known {
		return "—"
	}
	return num(lo) + "–" + num(hi)
}

// CompareText writes comparisons for a terminal.
func CompareText(w io.Writer, runs []CompareRun, cmps []Comparison) {
	for _, r := range runs {
		fmt.Fprintf(w, "%s  %s  (run %s, %s, %d cells)\n", r.Name, r.Path, r.R.ID, r.R.Status, len(r.R.Cells))
	}
	for _, c := range cmps {
		a, b := c.Base.Name, c.Other.Name
		fmt.Fprintf(w, "\n%s vs %s: ratio %s/%s; better = higher ops/s or lower latency; %q when the runs' intervals overlap (a repeated cell's: an exact bootstrap 99%% interval of its repeats' median, their range up to 8 repeats; else 99%% confidence)\n", b, a, b, a, VerdictSame)
		for _, d := range c.SetupDiffs {
			fmt.Fprintf(w, "  differs: %s\n", d)
		}
		for _, d := range c.ParamDiffs {
			fmt.Fprintf(w, "  parameter differs: %s\n", d)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		last := ""
		for _, row := range c.Rows {
			if k := row.Cell + " " + row.Phase; k != last {
				last = k
				fmt.Fprintf(tw, "\n%s · %s\n", row.Cell, row.Phase)
				fmt.Fprintf(tw, "  metric\t%s\t%s\t%s/%s\tverdict\t%s interval\t%s interval\t\n", a, b, b, a, a, b)
			}
			known := row.Verdict != VerdictUnknown
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Metric, num(row.Base), num(row.Other), ratioText(row.Ratio), row.Verdict,
				intervalText(row.BaseLo, row.BaseHi, known), intervalText(row.OtherLo, row.OtherHi, known))
		}
		tw.Flush()
		fmt.Fprintf(w, "\n%s\n", c.summary())
		for _, id := range c.OnlyBase {
			fmt.Fprintf(w, "only in %s: %s\n", a, id)
		}
		for _, id := range c.OnlyOther {
			fmt.Fprintf(w, "only in %s: %s\n", b, id)
		}
		for _, id := range c.NotCompared {
			fmt.Fprintf(w, "not compared (failed in %s or %s): %s\n", a, b, id)
		}
	}
	if anySingle(runs) {
		fmt.Fprintln(w, "\nintervals: 99% confidence from each run's own histogram and per-second series; they cannot include run-to-run noise. Repeat cells (--repeat) or runs before trusting a small difference.")
	}
}

// CompareMarkdown writes comparisons as GitHub tables.
func CompareMarkdown(w io.Writer, runs []CompareRun, cmps []Comparison) {
	fmt.Fprintln(w, "| run | file | id | status | cells |\n|:--|:--|:--|:--|--:|")
	for _, r := range runs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d |\n", r.Name, mdCode(r.Path), mdText(r.R.ID), mdText(r.R.Status), len(r.R.Cells))
	}
	for _, c := range cmps {
		a, b := c.Base.Name, c.Other.Name
		fmt.Fprintf(w, "\n## %s vs %s\n\nRatio %s/%s; better = higher ops/s or lower latency; *%s* when the runs' intervals overlap (a repeated cell's: an exact bootstrap 99%% interval of its repeats' median, their range up to 8 repeats; else 99%% confidence).\n", b, a, b, a, VerdictSame)
		if len(c.SetupDiffs)+len(c.ParamDiffs) > 0 {
			fmt.Fprintln(w)
			for _, d := range c.SetupDiffs {
				fmt.Fprintf(w, "- differs: %s\n", mdText(d))
			}
			for _, d := range c.ParamDiffs {
				fmt.Fprintf(w, "- parameter differs: %s\n", mdText(d))
			}
		}
		fmt.Fprintf(w, "\n| cell | phase | metric | %s | %s | %s/%s | verdict | %s interval | %s interval |\n|:--|:--|:--|--:|--:|--:|:--|--:|--:|\n", a, b, b, a, a, b)
		for _, row := range c.Rows {
			known := row.Verdict != VerdictUnknown
			v := row.Verdict
			if v != VerdictSame {
				v = "**" + v + "**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(row.Cell), mdText(row.Phase), mdText(row.Metric), num(row.Base), num(row.Other),
				ratioText(row.Ratio), v, intervalText(row.BaseLo, row.BaseHi, known), intervalText(row.OtherLo, row.OtherHi, known))
		}
		fmt.Fprintf(w, "\n%s\n", mdText(c.summary()))
		for _, id := range c.OnlyBase {
			fmt.Fprintf(w, "\nonly in %s: %s\n", a, mdText(id))
		}
		for _, id := range c.OnlyOther {
			fmt.Fprintf(w, "\nonly in %s: %s\n", b, mdText(id))
		}
		for _, id := range c.NotCompared {
			fmt.Fprintf(w, "\nnot compared (failed in %s or %s): %s\n", a, b, mdText(id))
		}
	}
}

func anySingle(runs []CompareRun) bool {
	for _, r := range runs {
		_, by := cellsByID(r.R)
		for _, cs := range by {
			if len(cs) == 1 {
				return true
			}
		}
	}
	return false
}

func (c Comparison) summary() string {
	n := map[string]int{}
	for _, r := range c.Rows {
		n[r.Verdict]++
	}
	parts := []string{fmt.Sprintf("%d better", n[VerdictBetter]), fmt.Sprintf("%d worse", n[VerdictWorse]), fmt.Sprintf("%d %s", n[VerdictSame], VerdictSame)}
	if n[VerdictUnknown] > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n[VerdictUnknown], VerdictUnknown))
	}
	return fmt.Sprintf("%s vs %s: %d figures of %d matched cells: %s", c.Other.Name, c.Base.Name, len(c.Rows), c.matchedCells(), strings.Join(parts, ", "))
}

func (c Comparison) matchedCells() int {
	seen := map[string]bool{}
	for _, r := range c.Rows {
		seen[r.Cell] = true
	}
	return len(seen)
}

// capacityRows compares the capacity at each SLO of a matched cell that
// searched one: with repeats, their median and range (as the capacity
// section's spread table); for one search, its value and its bracket, the
// confirmed rate up to the lowest rate above it that missed (a search
// cannot tell apart rates within it). None found counts as 0, bracketed
// up to the lowest rate tried.
func capacityRows(id string, ac, bc []*result.Cell) []ComparisonRow {
	first := capacityOf(ac[0])
	if first == nil || capacityOf(bc[0]) == nil {
		return nil
	}
	var rows []ComparisonRow
	for slo := range first.SLOs {
		x, y := capacityInterval(ac, slo), capacityInterval(bc, slo)
		if !x.known && x.v == 0 || !y.known && y.v == 0 {
			continue
		}
		row := ComparisonRow{Cell: id, Phase: "capacity at " + sloText(first, slo), Metric: "capacity ops/s", Base: x.v, Other: y.v,
			BaseLo: x.lo, BaseHi: x.hi, OtherLo: y.lo, OtherHi: y.hi, Ratio: math.NaN()}
		if x.v != 0 {
			row.Ratio = y.v / x.v
		}
		row.Verdict = verdict(x, y, true)
		rows = append(rows, row)
	}
	return rows
}

// capacityInterval is the capacity at SLO slo of a cell's repeats.
func capacityInterval(cells []*result.Cell, slo int) interval {
	var vs []float64
	var single interval
	for _, c := range cells {
		s := capacityOf(c)
		cp, ok := capacityAt(s, slo)
		if !ok {
			continue
		}
		v := cp.Value()
		vs = append(vs, v)
		// The bracket: the lowest missed rate above the capacity.
		hi := math.Inf(1)
		for _, st := range s.Steps {
			if st.SLO == slo && !st.Passed && st.OfferedOpsS > v {
				hi = math.Min(hi, st.OfferedOpsS)
			}
		}
		if !cp.Found {
			hi = cp.LowestTriedOpsS
		}
		single = interval{v: v, lo: v, hi: hi, known: !math.IsInf(hi, 1) && !cp.AtLeast}
	}
	if len(vs) < 2 {
		return single
	}
	sort.Float64s(vs)
	n := len(vs)
	return interval{v: (vs[(n-1)/2] + vs[n/2]) / 2, lo: vs[0], hi: vs[n-1], known: true}
}
