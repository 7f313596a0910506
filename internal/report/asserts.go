package report

import (
	"cmp"
	"io"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/result"
)

// assertsModel is the verdicts section of every format: each threshold
// the run was judged by (--assert, a scenario's asserts) on each cell and
// phase it scoped, with what was measured. nil for a run without any.
type assertsModel struct {
	verdicts *table
	failed   int
}

func newAssertsModel(r *result.Result) *assertsModel {
	if len(r.Assertions) == 0 {
		return nil
	}
	t := newTable("asserts", "each assertion on each cell and phase it scoped: what was measured, and the verdict", false,
		column{head: "assertion", left: true}, column{head: "cell", left: true}, column{head: "phase", left: true},
		column{head: "measured", m: "measured"}, column{head: "verdict", left: true})
	m := &assertsModel{verdicts: t}
	for _, v := range r.Assertions {
		verdict := "pass"
		if !v.Pass {
			verdict = "FAIL"
			m.failed++
		}
		where := v.Cell + result.RepeatSuffix(v.Repeat)
		measured := figureCell(assert.Measured(v), v.Measured)
		if v.Cell == "" {
			where, measured = "—", textCell(v.Note)
		}
		t.add(textCell(v.Expr), textCell(where), textCell(cmp.Or(v.Phase, "—")), measured, textCell(verdict))
	}
	return m
}

func (m *assertsModel) heading() string {
	if m.failed > 0 {
		return "assertions: " + thousands(int64(m.failed)) + " failed (exit code 3)"
	}
	return "assertions: all passed"
}

const assertsNote = "Each assertion is judged on every cell and phase its scope picks, after the cell ran: a latency in µs from the phase's histogram, ops/s over its measured time, errors and the error rate over its ops; capacity at each SLO (none found counts as 0), lost writes, the payments invariants and the hit ratio from the cell's own summary. An assertion that judged nothing fails: a threshold that checks nothing must not pass."

func (m *assertsModel) text(w io.Writer) {
	m.verdicts.textUnder(w, m.heading())
}

func (m *assertsModel) render(d doc) {
	d.para(m.heading() + ". " + assertsNote)
	d.table(m.verdicts)
}
