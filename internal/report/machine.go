package report

import (
	"io"
	"strconv"

	"github.com/storebench/storebench/internal/doctor"
	"github.com/storebench/storebench/internal/hiccup"
	"github.com/storebench/storebench/internal/result"
)

// machineModel is the "machine check" section of every format: what the
// brief machine check before a judging run (capacity at an SLO) found the
// machine itself adds to a latency, its figures and each check with what
// it means. nil for a run that made none.
type machineModel struct {
	figures, checks *table
}

func newMachineModel(r *result.Result) *machineModel {
	m := r.Machine
	if m == nil {
		return nil
	}
	figures := newTable("machine", "the machine's own latency, before the cells (µs)", true,
		column{head: "measure", left: true}, column{head: "p50", m: "p50_us"}, column{head: "p99", m: "p99_us"}, column{head: "max", m: "max_us"})
	wake := func(name string, f hiccup.Figures) {
		if f.Wakes > 0 {
			figures.add(textCell(name), figureCell(num(f.P50), f.P50), figureCell(num(f.P99), f.P99), figureCell(num(f.Max), f.Max))
		}
	}
	wake("idle CPU wake-up (after "+m.IdleInterval+" asleep)", m.IdleWake)
	wake("wake-up every 1 ms", m.TickWake)
	for _, rt := range []*doctor.RoundTrips{m.RTTSameCPU, m.RTTAcrossCPUs} {
		if rt != nil && rt.Error == "" {
			figures.add(textCell(rttName(rt)), figureCell(num(rt.P50), rt.P50), figureCell(num(rt.P99), rt.P99), figureCell(num(rt.Max), rt.Max))
		}
	}
	checks := newTable("machine-checks", "each check, what it means for the SLOs one can measure here, what helps", false,
		column{head: "check", left: true}, column{head: "found", left: true}, column{head: "meaning", left: true}, column{head: "helps", left: true})
	for _, c := range m.Checks {
		checks.add(textCell(c.Name), textCell(c.Value), textCell(c.Meaning), textCell(c.Help))
	}
	return &machineModel{figures: figures.orNil(), checks: checks.orNil()}
}

func rttName(rt *doctor.RoundTrips) string {
	return "loopback round trip, CPUs " + strconv.Itoa(rt.CPUs[0]) + " and " + strconv.Itoa(rt.CPUs[1])
}

const machineNote = "Measured before the cells by storebench doctor --brief, because this run judges latency against a bound: how late a thread on each CPU wakes (idle, and every 1 ms as cyclictest does), and a one-byte loopback round trip with both ends blocking in the kernel, the floor of any p50. An SLO within a few times of these figures measures the machine rather than the store; the platform stalls section has the same meter beside every phase."

func (m *machineModel) text(w io.Writer) {
	m.figures.textUnder(w, "machine check (storebench doctor --brief, before the cells; µs)")
	m.checks.textUnder(w, "machine checks")
}

func (m *machineModel) render(d doc) {
	d.para(machineNote)
	if m.figures != nil {
		d.table(m.figures)
	}
	if m.checks != nil {
		d.table(m.checks)
	}
}
