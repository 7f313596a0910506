// Package assert judges a run by a user's thresholds (--assert, a
// scenario's asserts): a metric, a comparison and a value with units, such
// as p99<=2ms, ops_s>=50k, error_rate<0.1%, capacity>0, optionally scoped
// to targets, workloads and phases (redis:get:p99<=1ms,
// 'postgres*:*:p99<=5ms'). Each is judged per matching cell and phase
// after the cell ran; a verdict is a result.Assertion. A measured "no"
// (no capacity at an SLO, a lost write) is a finding the run shows; an
// assertion is how a user makes it fail CI (exit 3).
package assert

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxLen bounds an expression: a threshold is a short rule, and its text
// is echoed in every verdict.
const MaxLen = 200

// Max bounds how many assertions a run takes: each is judged on every
// cell and phase.
const Max = 100

// kind is what a metric measures, and so where it is read and its unit.
type kind int

const (
	latency   kind = iota // a phase's (or op kind's) latency: a duration, in µs
	rate                  // ops/s
	count                 // a number of ops or errors
	ratio                 // a share: 0.001 or 0.1%
	verdict               // ok or not (invariants)
	cellCount             // a cell summary's count (durability's lost)
	cellRate              // a cell summary's rate (capacity at each SLO)
	cellRatio             // a cell summary's share (cache-aside's hit ratio)
)

// metricKinds are the names an assertion may use, and their kinds; p<N>
// (p50, p99.9) is a latency too.
var metricKinds = map[string]kind{
	"max": latency, "mean": latency, "min": latency,
	"ops_s": rate, "ops": count, "errors": count, "error_rate": ratio,
	"lost": cellCount, "invariants": verdict, "capacity": cellRate, "hit_ratio": cellRatio,
}

// names lists the metrics for an error message.
const names = "p<percentile> (p50, p99, p99.9), max, mean, min, ops_s, ops, errors, error_rate, lost, invariants, capacity, hit_ratio"

// Assertion is one parsed threshold.
type Assertion struct {
	Expr string
	// Scope is the parts before the metric, each a glob: a target (its
	// label or store kind; a label may itself hold ':'), then a workload
	// or phase (or op kind), then a phase.
	Scope  []string
	Metric string
	// Percentile is the metric's percentile for p<N> (99.9), else 0.
	Percentile float64
	Op         string
	Value      float64 // in the metric's unit: µs, ops/s, a count, a share, 1 for ok
	kind       kind
}

var exprRe = regexp.MustCompile(`^(.*?)(<=|>=|==|!=|<|>)(.*)$`)

// Parse reads one expression; its error is one line naming it.
func Parse(expr string) (Assertion, error) {
	a := Assertion{Expr: strings.TrimSpace(expr)}
	fail := func(format string, args ...any) (Assertion, error) {
		return Assertion{}, fmt.Errorf("assert %q: %s", a.Expr, fmt.Sprintf(format, args...))
	}
	if len(a.Expr) > MaxLen {
		return Assertion{}, fmt.Errorf("assert: %d characters, at most %d", len(a.Expr), MaxLen)
	}
	m := exprRe.FindStringSubmatch(a.Expr)
	if m == nil {
		return fail("want [target:[workload:[phase:]]]metric<op>value, e.g. p99<=2ms, ops_s>=50k, 'redis:get:p99<=1ms'")
	}
	left, right := strings.TrimSpace(m[1]), strings.TrimSpace(m[3])
	a.Op = m[2]
	parts := strings.Split(left, ":")
	a.Metric = strings.TrimSpace(parts[len(parts)-1])
	for _, s := range parts[:len(parts)-1] {
		s = strings.TrimSpace(s)
		if s == "" {
			return fail("an empty scope before %q", a.Metric)
		}
		if _, err := path.Match(s, ""); err != nil {
			return fail("scope %q is not a glob: %v", s, err)
		}
		a.Scope = append(a.Scope, s)
	}
	k, ok := metricKinds[a.Metric]
	if !ok {
		p, isPct := percentile(a.Metric)
		if !isPct {
			return fail("unknown metric %q (valid: %s)", a.Metric, names)
		}
		k, a.Percentile = latency, p
	}
	a.kind = k
	if right == "" {
		return fail("no value after %s", a.Op)
	}
	v, err := parseValue(k, right)
	if err != nil {
		return fail("%v", err)
	}
	a.Value = v
	if k == verdict && a.Op != "==" && a.Op != "!=" {
		return fail("%s is ok or not: use == or !=", a.Metric)
	}
	return a, nil
}

// ParseAll reads every expression, at most Max.
func ParseAll(exprs []string) ([]Assertion, error) {
	if len(exprs) > Max {
		return nil, fmt.Errorf("assert: %d assertions, at most %d", len(exprs), Max)
	}
	out := make([]Assertion, 0, len(exprs))
	for _, e := range exprs {
		a, err := Parse(e)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// percentile reads p50, p99.9; false for anything else.
func percentile(m string) (float64, bool) {
	num, ok := strings.CutPrefix(m, "p")
	if !ok || num == "" {
		return 0, false
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || !(p > 0 && p < 100) || strings.ContainsAny(num, "eE+-") {
		return 0, false
	}
	return p, true
}

// parseValue reads a value in the metric's unit.
func parseValue(k kind, s string) (float64, error) {
	switch k {
	case latency:
		d, err := time.ParseDuration(strings.ReplaceAll(s, "µ", "u"))
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%q is not a latency: want a duration such as 2ms, 500us, 1.5s", s)
		}
		return float64(d) / float64(time.Microsecond), nil
	case ratio, cellRatio:
		if num, ok := strings.CutSuffix(s, "%"); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || !(v >= 0 && v <= 100) {
				return 0, fmt.Errorf("%q is not a share: want 0%% to 100%%, or 0 to 1", s)
			}
			return v / 100, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return 0, fmt.Errorf("%q is not a share: want 0 to 1, or 0%% to 100%%", s)
		}
		return v, nil
	case verdict:
		if s != "ok" {
			return 0, fmt.Errorf("%q: invariants are judged against ok (invariants==ok)", s)
		}
		return 1, nil
	}
	return number(s)
}

// number reads a count or a rate: 50000, 50k, 1.5M.
func number(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		return 0, errors.New(strconv.Quote(s) + " is not a number: want e.g. 20000, 20k, 1.5M")
	}
	return v * mult, nil
}

// holds says whether measured meets the assertion.
func (a Assertion) holds(measured float64) bool {
	switch a.Op {
	case "<=":
		return measured <= a.Value
	case "<":
		return measured < a.Value
	case ">=":
		return measured >= a.Value
	case ">":
		return measured > a.Value
	case "==":
		return measured == a.Value
	}
	return measured != a.Value
}

// Unit is how a reader writes the assertion's values.
func (a Assertion) Unit() string {
	switch a.kind {
	case latency:
		return "µs"
	case rate, cellRate:
		return "ops/s"
	case ratio, cellRatio:
		return "ratio"
	}
	return ""
}

// cellLevel says the metric is a cell summary's, not a phase's.
func (a Assertion) cellLevel() bool { return a.kind >= verdict }
