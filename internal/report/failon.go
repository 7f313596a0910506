package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// FailRule is a regression threshold of compare --fail-on: a metric's
// change from the baseline beyond which, when the runs' intervals also
// say it is beyond noise, the comparison fails (exit 3). "p99>+10%": p99
// grew by more than 10%; "ops_s<-5%": throughput fell by more than 5%.
type FailRule struct {
	Expr   string
	Metric string  // a compareMetrics name: "p99 µs", "ops/s"
	Up     bool    // the rule fails on a rise (>), else on a fall (<)
	Change float64 // the threshold, a share of the baseline: 0.10, -0.05
}

var failRuleRe = regexp.MustCompile(`^\s*([a-z0-9_.]+)\s*([<>])\s*([+-]?[0-9.]+)\s*%\s*$`)

// failMetrics map a rule's metric to compare's.
var failMetrics = map[string]string{"ops_s": "ops/s", "mean": "mean µs", "p50": "p50 µs", "p90": "p90 µs", "p99": "p99 µs", "p99.9": "p99.9 µs", "p999": "p99.9 µs"}

// ParseFailRule reads one --fail-on; its error is one line.
func ParseFailRule(s string) (FailRule, error) {
	m := failRuleRe.FindStringSubmatch(s)
	if m == nil {
		return FailRule{}, fmt.Errorf("--fail-on %q: want METRIC>+N%% or METRIC<-N%%, e.g. 'p99>+10%%' or 'ops_s<-5%%' (metrics: ops_s, mean, p50, p90, p99, p99.9)", s)
	}
	metric, ok := failMetrics[m[1]]
	if !ok {
		return FailRule{}, fmt.Errorf("--fail-on %q: unknown metric %q (ops_s, mean, p50, p90, p99, p99.9)", s, m[1])
	}
	pct, err := strconv.ParseFloat(m[3], 64)
	if err != nil || math.Abs(pct) > 1e6 {
		return FailRule{}, fmt.Errorf("--fail-on %q: %q is not a percentage", s, m[3])
	}
	r := FailRule{Expr: strings.TrimSpace(s), Metric: metric, Up: m[2] == ">", Change: pct / 100}
	if r.Up && r.Change < 0 || !r.Up && r.Change > 0 {
		return FailRule{}, fmt.Errorf("--fail-on %q: a rise is >+N%%, a fall <-N%%", s)
	}
	return r, nil
}

// RuleVerdict is a rule judged on one matched cell phase.
type RuleVerdict struct {
	Rule         FailRule
	Cell, Phase  string
	Base, Other  float64
	Change       float64 // Other / Base − 1
	Judged, Fail bool
	// Why says the verdict in words: the change and the intervals, or why
	// it cannot be judged.
	Why string
}

// Judge applies rules to every matched cell phase: a rule fails where the
// change passes its threshold and the runs' intervals do not overlap (the
// compare verdict is better or worse, not "no clear difference"). A row
// whose spread is unknown cannot be judged and says so.
func (c Comparison) Judge(rules []FailRule) []RuleVerdict {
	var out []RuleVerdict
	for _, rule := range rules {
		for _, row := range c.Rows {
			if row.Metric != rule.Metric {
				continue
			}
			v := RuleVerdict{Rule: rule, Cell: row.Cell, Phase: row.Phase, Base: row.Base, Other: row.Other, Change: row.Ratio - 1}
			beyond := rule.Up && v.Change > rule.Change || !rule.Up && v.Change < rule.Change
			intervals := fmt.Sprintf("%s interval %s, %s interval %s", c.Base.Name, intervalText(row.BaseLo, row.BaseHi, true), c.Other.Name, intervalText(row.OtherLo, row.OtherHi, true))
			switch {
			case math.IsNaN(row.Ratio) || math.IsInf(row.Ratio, 0):
				v.Why = "cannot be judged: the baseline's value is 0"
			case row.Verdict == VerdictUnknown:
				v.Why = fmt.Sprintf("cannot be judged: %s %s → %s (%+.1f%%), but a run's spread is unknown (no histogram, too few samples)", row.Metric, num(row.Base), num(row.Other), 100*v.Change)
			case !beyond:
				v.Judged = true
				v.Why = fmt.Sprintf("%s %s → %s (%+.1f%%): within %s", row.Metric, num(row.Base), num(row.Other), 100*v.Change, rule.Expr)
			case row.Verdict == VerdictSame:
				v.Judged = true
				v.Why = fmt.Sprintf("%s %s → %s (%+.1f%%) passes the threshold, but within noise (%s overlap)", row.Metric, num(row.Base), num(row.Other), 100*v.Change, intervals)
			case machineExplains(rule, row):
				v.Why = fmt.Sprintf("%s %s → %s (%+.1f%%) passes %s, but %s's CPUs ran %.2f× slower over the phase (the hiccup probes' speed loop %.0f → %.0f ns): at the machine's speed the change is %+.1f%%, so it measures the machine; run both again", row.Metric, num(row.Base), num(row.Other), 100*v.Change, rule.Expr, c.Other.Name, row.Slowdown(), row.SpeedBase, row.SpeedOther, 100*(atMachineSpeed(row)-1))
			default:
				v.Judged, v.Fail = true, true
				v.Why = fmt.Sprintf("%s %s → %s (%+.1f%%), beyond %s and beyond noise (%s)", row.Metric, num(row.Base), num(row.Other), 100*v.Change, rule.Expr, intervals)
				if x := row.Slowdown(); speedsApart(x) {
					v.Why += fmt.Sprintf("; %s's CPUs ran %.2f× the baseline's time on the hiccup probes' speed loop", c.Other.Name, x)
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// machineExplains says that a change the rule would fail is the machine's:
// the other run's CPUs ran slower by speedDiffers or more (Slowdown), the
// change is a worsening (latency up, throughput down), and at the
// machine's speed it would not pass the rule. A whole run on a 2-vCPU VM
// once ran a Redis cell 2× slower (p50 24.7 → 47.9 µs, three repeats
// alike) for reasons in the host: no store change could be judged then.
func machineExplains(rule FailRule, row ComparisonRow) bool {
	x := row.Slowdown()
	worse := (row.Metric == "ops/s") != rule.Up
	if !worse || x < speedDiffers {
		return false
	}
	at := atMachineSpeed(row) - 1
	return rule.Up && at <= rule.Change || !rule.Up && at >= rule.Change
}

// atMachineSpeed is the row's ratio (other ÷ baseline) as if the other
// run's CPUs had run at the baseline's speed: a latency divided by the
// slowdown, a throughput multiplied by it.
func atMachineSpeed(row ComparisonRow) float64 {
	if row.Metric == "ops/s" {
		return row.Ratio * row.Slowdown()
	}
	return row.Ratio / row.Slowdown()
}

// FailOnText writes the rules' verdicts: each failure, the rows that could
// not be judged, and a count.
func FailOnText(w io.Writer, c Comparison, vs []RuleVerdict) {
	var failed, unjudged int
	for _, v := range vs {
		switch {
		case v.Fail:
			failed++
			fmt.Fprintf(w, "FAIL %s: %s · %s: %s\n", v.Rule.Expr, v.Cell, v.Phase, v.Why)
		case !v.Judged:
			unjudged++
			fmt.Fprintf(w, "not judged %s: %s · %s: %s\n", v.Rule.Expr, v.Cell, v.Phase, v.Why)
		}
	}
	fmt.Fprintf(w, "--fail-on, %s vs %s: %d judged, %d failed, %d not judged\n", c.Other.Name, c.Base.Name, len(vs)-unjudged, failed, unjudged)
	if len(c.SetupDiffs) > 0 {
		fmt.Fprintf(w, "the runs differ in their set-up (listed above): a difference may be the machine's or a version's, not the change's\n")
	}
}

// FailOnJUnit writes the rules' verdicts as JUnit XML: a test case per
// matched cell × rule, failed where any of its phases failed, skipped
// where none could be judged.
func FailOnJUnit(w io.Writer, cmps []Comparison, verdicts [][]RuleVerdict) error {
	doc := junitSuites{Name: "storebench compare"}
	for i, c := range cmps {
		s := junitSuite{Name: c.Other.Name + " vs " + c.Base.Name + " (" + c.Other.R.ID + " vs " + c.Base.R.ID + ")"}
		type key struct{ cell, rule string }
		index := map[key]int{}
		judged := map[int]bool{}
		for _, v := range verdicts[i] {
			k := key{v.Cell, v.Rule.Expr}
			j, ok := index[k]
			if !ok {
				s.Cases = append(s.Cases, junitCase{ClassName: v.Cell, Name: v.Cell + ": " + v.Rule.Expr})
				j = len(s.Cases) - 1
				index[k] = j
			}
			judged[j] = judged[j] || v.Judged
			if v.Fail {
				tc := &s.Cases[j]
				if tc.Failure == nil {
					tc.Failure = &junitProblem{Type: "regression", Message: v.Phase + ": " + v.Why}
					s.Failures++
				} else {
					tc.Failure.Message += "; " + v.Phase + ": " + v.Why
				}
				tc.Failure.Text = tc.Failure.Message
			}
		}
		for j := range s.Cases {
			if !judged[j] {
				s.Cases[j].Skipped = &junitSkip{Message: "cannot be judged: a run's spread is unknown"}
				s.Skipped++
			}
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	return writeJUnitDoc(w, doc)
}

func writeJUnitDoc(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
