package run

import (
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/result"
)

// planAsserts parses the run's thresholds and refuses, before any work, a
// target scope no planned cell's target matches (a typo would otherwise
// judge nothing until the run ended).
func planAsserts(exprs []string, cells []cell) ([]assert.Assertion, error) {
	as, err := assert.ParseAll(exprs)
	if err != nil {
		return nil, asInput(err)
	}
	for _, a := range as {
		matched := false
		for _, c := range cells {
			if a.MatchesTarget(c.Target.Spec.Label(), c.Target.Spec.Store) {
				matched = true
				break
			}
		}
		if !matched {
			return nil, inputf("assert %q: its scope matches no target of the run", a.Expr)
		}
	}
	return as, nil
}

// judge judges each finished cell by the run's thresholds and records the
// verdicts in the result as they come.
type judge struct {
	asserts []assert.Assertion
	abort   *time.Duration // --assert-abort's grace, nil: never stop
	started time.Time
	stores  map[string]string // target label -> store kind
	w       *result.Writer
	logf    func(format string, args ...any)
	judged  []int // verdicts per assertion
	aborted bool
}

// cell records c's verdicts, logs the failed ones, and says whether the
// run stops here: a failed verdict once the grace has passed.
func (j *judge) cell(c *result.Cell) (stop bool) {
	if len(j.asserts) == 0 {
		return false
	}
	verdicts := assert.JudgeCell(j.asserts, c, j.stores[c.Target], j.judged)
	failed := false
	for _, v := range verdicts {
		if !v.Pass {
			failed = true
			j.logf("  assertion failed: %s", assert.Line(v))
		}
	}
	logWriteErr(j.w.Update(func(r *result.Result) { r.Assertions = append(r.Assertions, verdicts...) }), j.logf)
	if failed && j.abort != nil && time.Since(j.started) >= *j.abort {
		j.aborted = true
		note := fmt.Sprintf("stopped at the first failed assertion (--assert-abort, grace %v): the cells after %s did not run", *j.abort, c.Label())
		j.logf("  %s", note)
		logWriteErr(j.w.Update(func(r *result.Result) { r.Notes = append(r.Notes, note) }), j.logf)
		return true
	}
	return false
}

// finish records a failing verdict for each assertion that judged nothing
// in the whole run (unless the run stopped early): a threshold that
// checks nothing must not pass.
func (j *judge) finish() {
	if len(j.asserts) == 0 || j.aborted {
		return
	}
	none := assert.Unjudged(j.asserts, j.judged)
	for _, v := range none {
		j.logf("assertion failed: %s", assert.Line(v))
	}
	if len(none) > 0 {
		logWriteErr(j.w.Update(func(r *result.Result) { r.Assertions = append(r.Assertions, none...) }), j.logf)
	}
}
