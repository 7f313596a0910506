package capacity

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of an SLO.
const (
	// MaxObjectives is how many percentiles one SLO may bound: each adds a
	// confidence interval every step must narrow.
	MaxObjectives = 8
	// MinObjective is the tightest bound: below 1 µs the engine's own cost
	// (~0.15 µs per op) and its clock reads are a large part of any latency.
	MinObjective = time.Microsecond
	// MaxObjective is the loosest bound: the histograms hold 60 s at most.
	MaxObjective = 60 * time.Second
	// maxSLOLen bounds the text, so a message quoting it stays one line.
	maxSLOLen = 200
)

// Objective bounds one latency percentile: the Percentile-th percentile of
// latency (from each op's intended start) must be at most Max.
type Objective struct {
	Percentile float64 // in (0, 100), at most 4 decimals
	Max        time.Duration
}

// String writes o as ParseSLO reads it: "p99.9<=5ms".
func (o Objective) String() string {
	return "p" + strconv.FormatFloat(o.Percentile, 'f', -1, 64) + "<=" + o.Max.String()
}

// SLO is a set of objectives that must all hold.
type SLO []Objective

// String writes s as ParseSLO reads it: "p99<=1ms,p50<=200µs".
func (s SLO) String() string {
	parts := make([]string, len(s))
	for i, o := range s {
		parts[i] = o.String()
	}
	return strings.Join(parts, ",")
}

// objectiveRe is one objective: p, a percentile with at most 4 decimals
// (a p99.99999 would need ~10^8 samples per step for a usable interval),
// "<=", a Go duration without sign (as Duration.String writes it, "1m0s").
var objectiveRe = regexp.MustCompile(`^p([0-9]{1,2}(?:\.[0-9]{1,4})?)<=((?:[0-9.]+(?:ns|us|µs|ms|s|m|h))+)$`)

// ParseSLO reads objectives such as "p99<=1ms,p99.9<=5ms,p50<=200us":
// comma-separated, each a percentile in (0, 100) with at most 4 decimals
// and a latency between MinObjective and MaxObjective, each percentile
// once, at most MaxObjectives. Spaces around an objective are ignored. The
// error is one line naming the first bad objective.
func ParseSLO(text string) (SLO, error) {
	if len(text) > maxSLOLen {
		return nil, fmt.Errorf("slo: %d characters, at most %d", len(text), maxSLOLen)
	}
	if strings.TrimSpace(text) == "" {
		return nil, errors.New(`slo: empty; want e.g. "p99<=1ms" or "p99<=1ms,p50<=200us"`)
	}
	parts := strings.Split(text, ",")
	if len(parts) > MaxObjectives {
		return nil, fmt.Errorf("slo: %d objectives, at most %d (each needs its own confidence interval per step)", len(parts), MaxObjectives)
	}
	var slo SLO
	for _, part := range parts {
		o, err := parseObjective(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(slo, func(p Objective) bool { return p.Percentile == o.Percentile }) {
			return nil, fmt.Errorf("slo: %q: p%s is bounded twice", strings.TrimSpace(part), strconv.FormatFloat(o.Percentile, 'f', -1, 64))
		}
		slo = append(slo, o)
	}
	return slo, nil
}

func parseObjective(s string) (Objective, error) {
	m := objectiveRe.FindStringSubmatch(s)
	if m == nil {
		return Objective{}, fmt.Errorf("slo: %q: want p<percentile><=<latency>, e.g. p99<=1ms or p99.9<=500us", s)
	}
	pct, err := strconv.ParseFloat(m[1], 64)
	if err != nil || pct <= 0 || pct >= 100 {
		return Objective{}, fmt.Errorf("slo: %q: the percentile must be above 0 and below 100", s)
	}
	d, err := time.ParseDuration(m[2])
	switch {
	case err != nil:
		return Objective{}, fmt.Errorf("slo: %q: latency %q is not a duration such as 1ms or 200us", s, m[2])
	case d < MinObjective:
		return Objective{}, fmt.Errorf("slo: %q: latency at least %v (below, the engine's own ~0.15 µs per op and clock reads dominate)", s, MinObjective)
	case d > MaxObjective:
		return Objective{}, fmt.Errorf("slo: %q: latency at most %v (the latency histograms stop there)", s, MaxObjective)
	}
	return Objective{Percentile: pct, Max: d}, nil
}
