package assert

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// NoMatch is the note of the verdict an assertion gets when it judged
// nothing in the whole run: a threshold that checks nothing must not pass.
const NoMatch = "matched no cell and phase that measured the metric"

// Judge returns a's verdicts on cell c, whose target has store kind store:
// one per phase (or op kind) its scope picks, or per SLO for capacity;
// none when the cell is out of scope or lacks the metric.
func (a Assertion) Judge(c *result.Cell, store string) []result.Assertion {
	var out []result.Assertion
	seen := map[string]bool{}
	add := func(where string, measured float64, note string) {
		if seen[where] {
			return
		}
		seen[where] = true
		out = append(out, result.Assertion{Expr: a.Expr, Metric: a.Metric, Op: a.Op, Value: a.Value, Unit: a.Unit(),
			Target: c.Target, Cell: c.ID, Repeat: c.Repeat, Phase: where, Measured: measured, Pass: a.holds(measured), Note: note})
	}
	for _, rest := range a.restAfterTarget(c.Target, store) {
		if a.cellLevel() {
			if len(rest) > 1 || len(rest) == 1 && !a.matchesWorkload(rest[0], c) {
				continue
			}
			a.judgeCell(c, add)
			continue
		}
		steps := c.Capacity.StepPhases()
		for i := range c.Phases {
			ph := &c.Phases[i]
			if steps[ph.Name] {
				continue // a capacity search's steps are its knee curve, judged by capacity
			}
			whole, ops := a.pick(rest, c, ph)
			if whole {
				if v, ok := a.phaseValue(ph.Ops, ph.Errors, ph.ThroughputOpsS, ph.LatencyUs, ph.Histogram); ok {
					add(ph.Name, v, "")
				}
			}
			for _, op := range ops {
				f := ph.ByOp[op]
				if v, ok := a.phaseValue(f.Ops, f.Errors, f.ThroughputOpsS, f.LatencyUs, f.Histogram); ok {
					add(ph.Name+" "+op, v, "")
				}
			}
		}
	}
	return out
}

// restAfterTarget is, for each way the scope's first parts glob-match the
// cell's target (its label, which may hold ':', or its store kind), the
// parts left for the workload and phase. An empty scope matches with
// nothing left.
func (a Assertion) restAfterTarget(label, store string) [][]string {
	if len(a.Scope) == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for i := 1; i <= len(a.Scope); i++ {
		glob := strings.Join(a.Scope[:i], ":")
		if match(glob, label) || store != "" && match(glob, store) {
			out = append(out, a.Scope[i:])
		}
	}
	return out
}

// MatchesTarget says whether a's scope could pick a cell of the target
// labelled label of store kind store: a target scope that matches no
// target of the plan is refused before any work.
func (a Assertion) MatchesTarget(label, store string) bool {
	return len(a.restAfterTarget(label, store)) > 0
}

func match(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// matchesWorkload: a scope part names the cell's workload type or its
// entry's name.
func (a Assertion) matchesWorkload(part string, c *result.Cell) bool {
	return match(part, c.Workload) || c.Name != "" && match(part, c.Name)
}

// pick says which of phase ph's figures rest scopes: the whole phase,
// and which op kinds of it.
func (a Assertion) pick(rest []string, c *result.Cell, ph *metrics.Phase) (whole bool, ops []string) {
	var phasePart string
	switch len(rest) {
	case 0:
		return true, nil
	case 1:
		if a.matchesWorkload(rest[0], c) {
			return true, nil
		}
		phasePart = rest[0]
	case 2:
		if !a.matchesWorkload(rest[0], c) {
			return false, nil
		}
		phasePart = rest[1]
	default:
		return false, nil
	}
	whole = match(phasePart, ph.Name)
	for op := range ph.ByOp {
		if match(phasePart, op) {
			ops = append(ops, op)
		}
	}
	return whole, ops
}

// phaseValue is the metric of a phase's (or an op kind's) figures; false
// when they hold none (a latency of a phase without a successful op).
func (a Assertion) phaseValue(ops int64, errs map[string]int64, opsS float64, l metrics.Latency, histogram string) (float64, bool) {
	nErr := metrics.ErrorTotal(errs)
	switch a.Metric {
	case "ops_s":
		return opsS, true
	case "ops":
		return float64(ops), true
	case "errors":
		return float64(nErr), true
	case "error_rate":
		if ops == 0 {
			return 0, true
		}
		return float64(nErr) / float64(ops), true
	}
	if ops-nErr <= 0 {
		return 0, false
	}
	switch a.Metric {
	case "max":
		return l.Max, true
	case "mean":
		return l.Mean, true
	case "min":
		return l.Min, true
	}
	switch a.Percentile {
	case 50:
		return l.P50, true
	case 90:
		return l.P90, true
	case 99:
		return l.P99, true
	case 99.9:
		return l.P999, true
	}
	h, err := metrics.DecodeHistogram(histogram)
	if err != nil || h == nil || h.TotalCount() == 0 {
		return 0, false
	}
	return float64(h.ValueAtQuantile(a.Percentile)) / 1e3, true
}

// judgeCell judges a cell summary's metric.
func (a Assertion) judgeCell(c *result.Cell, add func(where string, measured float64, note string)) {
	switch a.Metric {
	case "lost":
		if c.Durability != nil {
			add("", float64(c.Durability.Lost), "")
		}
	case "invariants":
		if c.Payments != nil {
			v, note := 0.0, c.Payments.Invariants.String()
			if c.Payments.Invariants.OK {
				v = 1
			}
			add("", v, note)
		}
	case "hit_ratio":
		if c.CacheAside != nil {
			add("", c.CacheAside.HitRatio, "")
		}
	case "capacity":
		if c.Capacity == nil {
			return
		}
		s := c.Capacity
		for _, cp := range s.Capacity {
			slo := "SLO " + strconv.Itoa(cp.SLO+1)
			if cp.SLO >= 0 && cp.SLO < len(s.SLOs) {
				slo = s.SLOs[cp.SLO].Text
			}
			switch {
			case !cp.Found:
				add(slo, 0, fmt.Sprintf("none (lowest tried %.0f ops/s)", cp.LowestTriedOpsS))
			case cp.AtLeast:
				add(slo, cp.OpsS, "at least (the client or the search's range bounded it)")
			default:
				add(slo, cp.OpsS, "")
			}
		}
	}
}

// Unmatched is the failing verdict of an assertion that judged nothing.
func (a Assertion) Unmatched() result.Assertion {
	return result.Assertion{Expr: a.Expr, Metric: a.Metric, Op: a.Op, Value: a.Value, Unit: a.Unit(), Note: NoMatch}
}

// Line is a verdict in one line, as the terminal says a failed one:
// "p99<=1ns: memory/kv/keys=1000 read: measured 12.3 µs".
func Line(v result.Assertion) string {
	where := v.Cell + result.RepeatSuffix(v.Repeat)
	if v.Phase != "" {
		where += " " + v.Phase
	}
	if v.Cell == "" {
		return v.Expr + ": " + v.Note
	}
	text := fmt.Sprintf("%s: %s: measured %s", v.Expr, where, Measured(v))
	if v.Note != "" && v.Metric != "capacity" {
		text += " (" + v.Note + ")"
	}
	return text
}

// Measured is a verdict's measured value with its unit: "12.3 µs",
// "none (lowest tried 2000 ops/s)", "0.1%", "ok".
func Measured(v result.Assertion) string {
	switch {
	case v.Metric == "invariants":
		if v.Measured == 1 {
			return "ok"
		}
		return "violated"
	case v.Metric == "capacity" && v.Note != "":
		return strconv.FormatFloat(v.Measured, 'f', -1, 64) + " ops/s, " + v.Note
	case v.Unit == "ratio":
		return strconv.FormatFloat(v.Measured*100, 'g', 4, 64) + "%"
	case v.Unit == "":
		return strconv.FormatFloat(v.Measured, 'f', -1, 64)
	}
	return strconv.FormatFloat(v.Measured, 'g', 4, 64) + " " + v.Unit
}

// JudgeCell is every assertion's verdicts on cell c, whose target has
// store kind store; judged[i] counts assertion i's verdicts so far
// (Unjudged reads it at the end).
func JudgeCell(as []Assertion, c *result.Cell, store string, judged []int) []result.Assertion {
	var out []result.Assertion
	for i, a := range as {
		vs := a.Judge(c, store)
		judged[i] += len(vs)
		out = append(out, vs...)
	}
	return out
}

// Unjudged is the failing verdict of each assertion that judged nothing.
func Unjudged(as []Assertion, judged []int) []result.Assertion {
	var out []result.Assertion
	for i, a := range as {
		if judged[i] == 0 {
			out = append(out, a.Unmatched())
		}
	}
	return out
}
