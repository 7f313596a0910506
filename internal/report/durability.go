package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/durability"
)

// durabilityOf is a cell's durability summary: the one place this file
// reads it, so moving the schema's types is a one-line change here.
func durabilityOf(c *result.Cell) *durability.Summary { return c.Durability }

// durabilityModel is the durability section of every format: acknowledged
// writes lost per target when its process is SIGKILLed, over how many
// trials, the loss window and the recovery time; then, per target, what a
// process crash is expected to lose and what a power loss would lose,
// which the run does not test.
type durabilityModel struct {
	lost   *table
	legend []string // what the columns mean
	failed []string // "target failed: first line of the error"
	// unrecovered: targets that did not come back after a crash (a
	// finding), with their server's last log lines.
	unrecovered []durabilityUnrecovered
	verdicts    []durabilityVerdict
	// notPowerLoss is why a process crash is not a power loss, as the
	// result recorded it (today's text for results without it).
	notPowerLoss string
	// power: some cells cut the power (fault power).
	power bool
	// fsCost compares, per power-cut cell, the store's writes on its plain
	// directory and on the power-cut filesystem; nil when none measured it.
	fsCost *table
	// nodeKills is one row per trial that killed one node of a cluster or
	// pool; nil when none did. findings are losses on the nodes not killed.
	nodeKills *table
	findings  []string
}

// nodeKillNote says what the node-kill table is, under it.
const nodeKillNote = "Node kills: each trial SIGKILLed one node serving keys of a managed cluster or pool (chosen by the seed) while the writers went on writing through the others. " +
	"recovery: the kill to the first successful write to a key of the killed node (a replica's failover, or storebench's restart of the node after the outage shown); " +
	"outage errors: the writers' failed writes in between, by class; lost on the killed node: its acknowledged writes missing afterwards, of those it acknowledged before the kill " +
	"(asynchronous replication, or a memcached server's memory: expected); lost elsewhere: on the nodes that were not killed, which must be 0."

// addNodeKills adds c's node-kill trials to the table, and its losses on
// the nodes not killed to the findings.
func (m *durabilityModel) addNodeKills(c *result.Cell, s *durability.Summary) {
	for _, t := range s.PerTrial {
		k := t.NodeKill
		if k == nil {
			continue
		}
		if m.nodeKills == nil {
			m.nodeKills = newTable("durability-node-kill", "one node killed per trial, the writers going on through the others", true,
				column{head: "target", left: true}, column{head: "trial", m: "trial"}, column{head: "node killed", left: true},
				column{head: "recovered by", left: true}, column{head: "recovery", m: "recovery_s"}, column{head: "outage errors", left: true},
				column{head: "lost on killed node", left: true}, column{head: "lost elsewhere", m: "lost_other"})
		}
		how := k.Recovered
		if k.OutageS > 0 {
			how += " after " + durSecs(k.OutageS) + " s"
		}
		var errs []string
		for _, class := range sortedKeys(k.OutageErrors) {
			errs = append(errs, thousands(k.OutageErrors[class])+" "+class)
		}
		outage := "none"
		if len(errs) > 0 {
			outage = strings.Join(errs, ", ")
		}
		m.nodeKills.add(textCell(durRowName(c)), countCell(int64(t.Trial)), textCell(k.Node+" ("+k.Role+")"), textCell(how),
			figureCell(durSecs(t.RecoveryS)+" s", t.RecoveryS), textCell(outage),
			textCell(fmt.Sprintf("%s of %s", thousands(k.LostKilled), thousands(k.AckedKilledBeforeKill))), countCell(k.LostOther))
		if k.LostOther > 0 {
			m.findings = append(m.findings, fmt.Sprintf("FINDING: %s trial %d lost %s acknowledged writes on nodes that were NOT killed (of %s): those nodes never stopped",
				durRowName(c), t.Trial, thousands(k.LostOther), thousands(k.AckedOther)))
		}
	}
}

// fsCostNote says what the filesystem-cost table is, under it.
const fsCostNote = "The power-cut filesystem's own cost: before its trials, each power-cut cell times one writer's writes (after unrecorded warm-up writes) through the store on the plain directory, " +
	"then on the power-cut filesystem (FUSE, with its undo log). The difference is the filesystem's, not the store's; " +
	"the two sides ran one after the other on a shared machine (phases fs-plain and fs-powercut)."

type durabilityUnrecovered struct {
	what    string // "target did not recover after trial N's crash: error"
	logTail []string
}

// newUnrecovered says how a cell's store failed to recover.
func newUnrecovered(c *result.Cell, u *durability.Unrecovered) durabilityUnrecovered {
	var tail []string
	for _, l := range strings.Split(strings.TrimSpace(u.LogTail), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			tail = append(tail, l)
		}
	}
	return durabilityUnrecovered{fmt.Sprintf("%s did not recover after trial %d's crash: %s", durRowName(c), u.Trial, durFirstLine(u.Error)), tail}
}

// item is the finding as one list item (Markdown, HTML).
func (u durabilityUnrecovered) item() string {
	if len(u.logTail) == 0 {
		return u.what
	}
	return u.what + ". Server log, last lines: " + strings.Join(u.logTail, " ⏎ ")
}

type durabilityVerdict struct {
	target, verdict, processCrash, powerLoss, filesystem string
}

// durabilityTitle heads the section in every format.
const durabilityTitle = "durability: acknowledged writes lost when the store's process is SIGKILLed and restarted (a process crash, not a power loss)"

// powerTitle heads the section when cells cut the power.
const powerTitle = "durability: acknowledged writes lost when the store's process is SIGKILLed and restarted, and where marked (power cut) when the power is cut under it"

// title is the section's heading.
// subtitle completes the section's heading in Markdown and HTML: what was
// killed.
func (m *durabilityModel) subtitle() string { return strings.TrimPrefix(m.title(), "durability: ") }

func (m *durabilityModel) title() string {
	if m.power {
		return powerTitle
	}
	return durabilityTitle
}

// newDurabilityModel builds the section; nil when the result has no
// durability cell.
func newDurabilityModel(r *result.Result) *durabilityModel {
	var cells []*result.Cell
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Workload == "durability" {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil
	}
	m := &durabilityModel{legend: []string{
		"acked: writes acknowledged before the kills, all trials; lost: acknowledged writes missing (or holding another value) after the restart;",
		"lost all: trials that lost every acknowledged write; window: how long before the kill the oldest lost write was acknowledged, and how many",
		"acknowledged writes came from then on; recovery: restart (for files and SQLite: the writer's death) to the first successful read.",
	}}
	m.lost = newTable("durability", "acknowledged writes lost per target over its trials", true,
		column{head: "target", left: true}, column{head: "trials", left: true}, column{head: "acked", m: "acked"},
		column{head: "lost max", m: "lost_max"}, column{head: "lost mean", m: "lost_mean"}, column{head: "lost per trial", left: true},
		column{head: "lost all", left: true}, column{head: "window max", left: true},
		column{head: "recovery mean", m: "recovery_mean_s"}, column{head: "recovery max", m: "recovery_max_s"})
	power, kill := 0, 0
	for _, c := range cells {
		if s := durabilityOf(c); s != nil && s.Fault == "power" {
			power++
			if pc := s.PowerCuts; pc != nil {
				m.legend = append(m.legend, fmt.Sprintf("%s: %d power cuts discarded %s bytes written since their file's last fsync (%s files rolled back) and %s names created, removed or renamed since their directory's last fsync.",
					durRowName(c), pc.Cuts, thousands(pc.BytesDiscarded), thousands(pc.FilesRolledBack), thousands(pc.NamesUndone)))
			}
		} else {
			kill++
		}
	}
	for _, c := range cells {
		if s := durabilityOf(c); s != nil && s.FSCost != nil {
			if m.fsCost == nil {
				m.fsCost = newTable("durability-fs-cost", "write latency through the store on the plain directory and on the power-cut filesystem (µs)", true,
					column{head: "target", left: true}, column{head: "writes", m: "writes"},
					column{head: "p50 plain", m: "plain_p50_us"}, column{head: "p50 power-cut fs", m: "mount_p50_us"},
					column{head: "p99 plain", m: "plain_p99_us"}, column{head: "p99 power-cut fs", m: "mount_p99_us"},
					column{head: "mean plain", m: "plain_mean_us"}, column{head: "mean power-cut fs", m: "mount_mean_us"})
			}
			f := s.FSCost
			m.fsCost.add(textCell(durRowName(c)), countCell(f.Writes),
				figureCell(us(f.Plain.P50), f.Plain.P50), figureCell(us(f.Mount.P50), f.Mount.P50),
				figureCell(us(f.Plain.P99), f.Plain.P99), figureCell(us(f.Mount.P99), f.Mount.P99),
				figureCell(us(f.Plain.Mean), f.Plain.Mean), figureCell(us(f.Mount.Mean), f.Mount.Mean))
		}
		m.lost.add(durabilityRow(c)...)
		if s := durabilityOf(c); s != nil {
			m.addNodeKills(c, s)
		}
		if s := durabilityOf(c); s != nil && s.Unrecovered != nil {
			m.unrecovered = append(m.unrecovered, newUnrecovered(c, s.Unrecovered))
		}
		if c.Status != result.CellOK && c.Error != "" {
			m.failed = append(m.failed, fmt.Sprintf("%s failed: %s", durRowName(c), durFirstLine(c.Error)))
		}
		if s := durabilityOf(c); s != nil && m.notPowerLoss == "" {
			m.notPowerLoss = s.NotPowerLoss
		}
		if s := durabilityOf(c); s != nil && (s.Verdict != "" || s.ProcessCrash != "") {
			m.verdicts = append(m.verdicts, durabilityVerdict{durRowName(c), s.Verdict, s.ProcessCrash, s.PowerLoss, s.Filesystem})
		}
	}
	m.power = power > 0
	switch {
	case power > 0 && kill == 0:
		m.notPowerLoss = powerCutNote
	case m.notPowerLoss == "":
		m.notPowerLoss = durability.NotPowerLoss
	}
	if power > 0 && kill > 0 {
		m.notPowerLoss += " " + powerCutNote
	}
	return m
}

// powerCutNote says what a power-cut cell measured.
const powerCutNote = "The cells marked (power cut) cut the power instead: storebench SIGKILLed the server (for files and SQLite: the process writing them), then discarded every write and name change that no fsync had made durable (a FUSE filesystem under its data dir that keeps track of fsyncs, as a power loss would) and restarted it (reopened the file store or database) on what survived: their losses are a power loss's, measured."

// durRowName names a durability cell's row: its target, and (power cut)
// for a power-fault cell.
func durRowName(c *result.Cell) string {
	if s := durabilityOf(c); s != nil && s.Fault == "power" {
		return rowName(c) + " (power cut)"
	}
	return rowName(c)
}

// durabilityRow is one target's row of the lost-writes table.
func durabilityRow(c *result.Cell) []cell {
	s := durabilityOf(c)
	none := textCell("—")
	row := []cell{textCell(durRowName(c))}
	if s == nil {
		return append(row, none, none, none, none, none, none, none, none, none)
	}
	row = append(row, textCell(fmt.Sprintf("%d/%d", s.Trials, s.TrialsAsked)))
	if s.Trials == 0 {
		return append(row, none, none, none, none, none, none, none, none)
	}
	all, window := none, none
	if s.LossTrials > 0 {
		all = textCell(fmt.Sprintf("%d of %d", s.LostAllTrials, s.Trials))
		window = textCell(fmt.Sprintf("%s s, %s writes", durSecs(s.WindowMaxS), thousands(s.WindowMaxWrites)))
	}
	return append(row, countCell(s.Acked), countCell(s.LostMax), figureCell(tenths(s.LostMean), s.LostMean),
		textCell(perTrialLost(s.PerTrial)), all, window,
		figureCell(durSecs(s.RecoveryMeanS)+" s", s.RecoveryMeanS), figureCell(durSecs(s.RecoveryMaxS)+" s", s.RecoveryMaxS))
}

// DurabilityText prints the durability section for the terminal; nothing
// when the result has no durability cell.
func DurabilityText(w io.Writer, r *result.Result) { sectionText(w, r, "durability") }

// text prints the section for the terminal.
func (m *durabilityModel) text(w io.Writer) {
	m.lost.textUnder(w, m.title())
	for _, l := range append(m.legend, m.failed...) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, u := range m.unrecovered {
		fmt.Fprintf(w, "  %s\n", u.what)
		if len(u.logTail) > 0 {
			fmt.Fprintln(w, "    server log, last lines:")
		}
		for _, l := range u.logTail {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
	if m.nodeKills != nil {
		m.nodeKills.textUnder(w, m.nodeKills.caption)
		for _, f := range m.findings {
			fmt.Fprintf(w, "  %s\n", f)
		}
		fmt.Fprintln(w, "  "+durWrap(nodeKillNote, 108, "  "))
	}
	if m.fsCost != nil {
		m.fsCost.textUnder(w, "the power-cut filesystem's own cost: "+m.fsCost.caption)
		fmt.Fprintln(w, "  "+durWrap(fsCostNote, 108, "  "))
	}
	fmt.Fprintln(w, "\n"+durWrap(m.notPowerLoss, 110, ""))
	fmt.Fprintln(w, "\n"+durabilityVerdictsHead)
	for _, v := range m.verdicts {
		fmt.Fprintf(w, "  %s: %s\n", v.target, v.verdict)
		fmt.Fprintf(w, "    process crash: %s\n", v.processCrash)
		fmt.Fprintf(w, "    power loss:    %s\n", v.powerLoss)
		if v.onTmpfs() {
			fmt.Fprintf(w, "    data on %s\n", v.filesystem)
		}
	}
}

const durabilityVerdictsHead = "what each configuration loses (measured: the verdict; expected on a process crash, and on a power loss or OS crash, which is not tested):"

func (v durabilityVerdict) onTmpfs() bool { return strings.HasPrefix(v.filesystem, "tmpfs") }

// render writes the section to Markdown or HTML.
func (m *durabilityModel) render(d doc) {
	d.table(m.lost)
	d.para(strings.Join(m.legend, " "))
	d.list(m.failed)
	var unrecovered []string
	for _, u := range m.unrecovered {
		unrecovered = append(unrecovered, u.item())
	}
	d.list(unrecovered)
	if m.nodeKills != nil {
		d.table(m.nodeKills)
		d.list(m.findings)
		d.para(nodeKillNote)
	}
	if m.fsCost != nil {
		d.table(m.fsCost)
		d.para(fsCostNote)
	}
	d.para(m.notPowerLoss)
	d.heading("", strings.TrimSuffix(durabilityVerdictsHead, ":"))
	var items []string
	for _, v := range m.verdicts {
		item := fmt.Sprintf("%s: %s. Process crash: %s. Power loss: %s.", v.target, v.verdict, v.processCrash, v.powerLoss)
		if v.onTmpfs() {
			item += " Data on " + v.filesystem + "."
		}
		items = append(items, item)
	}
	d.list(items)
}

// perTrialLost lists each trial's lost writes, the first few of them.
func perTrialLost(ts []durability.Trial) string {
	const show = 6
	var parts []string
	for i, t := range ts {
		if i == show {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, thousands(t.Lost+t.Wrong))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " / ")
}

func durSecs(v float64) string {
	switch {
	case v >= 10:
		return fixed(v, 1)
	case v >= 0.01:
		return fixed(v, 2)
	}
	return fixed(v, 3)
}

func durFirstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// durWrap breaks text into lines of at most width characters, each after the
// first starting with indent.
func durWrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
