package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/sessions"
)

// sessionsOf is a cell's sessions summary.
func sessionsOf(c *result.Cell) *sessions.Summary { return c.Sessions }

// sessionsArticle is the article's mean ms and × unlogged for a phase A
// cell, from the result's own article (the table of the cell's workload
// entry that varies the variant), so an old result shows its own figures;
// "—" where it has none.
func sessionsArticle(r *result.Result, c *result.Cell, variant string) (ms, ratio string) {
	if r.Article == nil {
		return "—", "—"
	}
	for _, t := range r.Article.Tables {
		col := slices.Index(t.Columns, variant)
		if t.Workload != entryName(c) || t.Param != "variant" || col < 0 || len(t.Rows) == 0 {
			continue
		}
		row := t.Rows[0] // the article's, unless a row names this cell's target
		if i := slices.IndexFunc(t.Rows, func(row result.ArticleRow) bool { return row.Target == c.Target }); i >= 0 {
			row = t.Rows[i]
		}
		return articleValue(row.Values, col), articleValue(row.Ratios, col)
	}
	return "—", "—"
}

// articleValue is figure i of an article row as the article wrote it.
func articleValue(vs []*float64, i int) string {
	if i < len(vs) && vs[i] != nil {
		return fmt.Sprint(*vs[i])
	}
	return "—"
}

// sessionsModel is the sessions section of every format: phase A beside
// the article's figures and ratios, phase B per target and design
// (latency, throughput, what the store's internals did, the correctness
// counters), the designs' knobs, the read replica, and the SQL corrections.
type sessionsModel struct {
	insertHead string
	insert     *table // nil without phase A cells
	churnHead  string
	churn      *table // nil without phase B cells
	extras     []string
	knobs      *table
	replica    *table // nil without reads on a replica
	notes      []string
}

var (
	sessionsInsertNotes = []string{
		"Compare the ratios, not the milliseconds (the article: postgres:15-alpine in local Docker); (p50) is the ratio of medians, which a few",
		"stalls cannot move. tx vs tx-string separates the round trips from the commit mode, function vs function-sync the commit mode from the call form.",
	}
	sessionsChurnLegend = "(latency µs per call; keepalive calls carry many ids; stale = a session read after it expired, lost = a live session missing; linger = longest an expired session stayed stored)"
	sessionsReplicaHead = "Sessions on a read replica (reads on a streaming replica; creates, keepalives and reaps on the primary)"
	sessionsReplicaNote = "An UNLOGGED table is not replicated: it exists on the replica but PostgreSQL refuses to read it there, so every read is a miss."
	sessionsSQLHead     = "Sessions SQL: the article's statements have errors; storebench runs the corrected forms (workloads/sessions.md, errata):"
	sessionsSQL         = []string{
		"read       SELECT payload FROM sessions WHERE id = $1 AND expires_at > now()",
		"keepalive  UPDATE sessions SET expires_at = now() + ttl WHERE id = ANY($1::bigint[]) AND expires_at > now() [AND expires_at < now() + refresh]",
		"reap       DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < now() LIMIT n FOR UPDATE SKIP LOCKED)",
		"ids        BIGINT GENERATED ALWAYS AS IDENTITY (CACHE 100); every insert sets expires_at = now() + interval (the naive table has no default)",
		"commit     synchronous_commit=off by SET LOCAL in the transaction or set_config(…, true) in new_session(): a function SET clause would be undone before the commit",
		"timestamp  a TIMESTAMP expires_at is compared with LOCALTIMESTAMP, never with now() through the session time zone",
	}
	sessionsSQLNote = "The keepalive's \"AND expires_at > now()\" goes beyond the spec: without it a flush brings back a session that expired since it was read."
)

// newSessionsModel builds the section; nil without a sessions cell.
func newSessionsModel(r *result.Result) *sessionsModel {
	var insert, churn []*result.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		switch s := sessionsOf(c); {
		case s == nil:
		case s.Phase == sessions.PhaseInsert:
			insert = append(insert, c)
		default:
			churn = append(churn, c)
		}
	}
	if len(insert)+len(churn) == 0 {
		return nil
	}
	m := &sessionsModel{}
	if len(insert) > 0 {
		m.insertHead = fmt.Sprintf("Sessions phase A: the article's micro-benchmark, %s inserts of 250-character JSON one by one on one connection", thousands(sessionsOf(insert[0]).Inserts))
		m.insert = sessionsInsertTable(r, insert)
	}
	if len(churn) > 0 {
		m.churnHead = sessionsChurnHead(sessionsOf(churn[0]).Timing)
		m.churn = sessionsChurnTable(churn)
		for _, c := range churn {
			if line := sessExtras(sessionsOf(c)); line != "" {
				m.extras = append(m.extras, fmt.Sprintf("%s %s: %s", rowName(c), sessionsOf(c).Design, line))
			}
		}
		m.knobs = sessionsKnobTable(churn)
		m.replica = sessionsReplicaTable(churn)
	}
	m.notes = sessionsNotes(append(insert, churn...))
	return m
}

func sessionsInsertTable(r *result.Result, cells []*result.Cell) *table {
	t := newTable("sessions-insert", "phase A: ms per insert; × unlogged is the ratio to the unlogged table's mean, (p50) of medians", false,
		column{head: "target", left: true}, column{head: "variant", left: true}, column{head: "mean ms", m: "mean_ms"}, column{head: "p50 ms", m: "p50_ms"},
		column{head: "p99 ms", m: "p99_ms"}, column{head: "× unlogged", m: "ratio"}, column{head: "(p50)", m: "ratio_p50"},
		column{head: "article ms"}, column{head: "article ×"}, column{head: "what it sends", left: true})
	unlogged, unlogged50 := map[string]float64{}, map[string]float64{}
	for _, c := range cells {
		if p, ok := c.Phase("insert"); ok && sessionsOf(c).Variant == "unlogged" && c.Status == result.CellOK {
			unlogged[c.Target], unlogged50[c.Target] = p.LatencyUs.Mean, p.LatencyUs.P50
		}
	}
	none := textCell("—")
	for _, c := range cells {
		s := sessionsOf(c)
		articleMs, articleRatio := sessionsArticle(r, c, s.Variant)
		p, ok := c.Phase("insert")
		if !ok || c.Status != result.CellOK {
			t.add(textCell(rowName(c)), textCell(s.Variant), none, none, none, none, none, textCell(articleMs), textCell(articleRatio), textCell(s.VariantDoc+" ("+c.Status+")"))
			continue
		}
		ratio, ratio50 := none, none
		if u := unlogged[c.Target]; u > 0 {
			ratio = figureCell(fixed(p.LatencyUs.Mean/u, 2), p.LatencyUs.Mean/u)
		}
		if u := unlogged50[c.Target]; u > 0 {
			ratio50 = figureCell(fixed(p.LatencyUs.P50/u, 2), p.LatencyUs.P50/u)
		}
		msCell := func(v float64) cell { return figureCell(fixed(v/1000, 3), v/1000) }
		t.add(textCell(rowName(c)), textCell(s.Variant), msCell(p.LatencyUs.Mean), msCell(p.LatencyUs.P50), msCell(p.LatencyUs.P99),
			ratio, ratio50, textCell(articleMs), textCell(articleRatio), textCell(s.VariantDoc))
	}
	return t
}

func sessionsChurnHead(t *sessions.Timing) string {
	if t == nil {
		return "Sessions phase B: steady churn"
	}
	return fmt.Sprintf("Sessions phase B: steady churn; TTL %s (30 min × %s), every interval scaled with it; %s measured after a %s warm-up",
		sessSeconds(t.TTLS), sessScale(t.Scale), sessSeconds(t.DurationS), sessSeconds(t.WarmupS))
}

func sessionsChurnTable(cells []*result.Cell) *table {
	t := newTable("sessions-churn", "phase B: latency µs per call, what the store's internals did, and the correctness counters", true,
		column{head: "target", left: true}, column{head: "design", left: true}, column{head: "creates/s", m: "create_ops_s"}, column{head: "reads/s", m: "read_ops_s"},
		column{head: "read p50", m: "read_p50"}, column{head: "read p99", m: "read_p99"}, column{head: "keepalive p50", m: "keepalive_p50"},
		column{head: "keepalive p99", m: "keepalive_p99"}, column{head: "reap p99", m: "reap_p99"}, column{head: "peak dead tuples", m: "peak_dead_tuples"},
		column{head: "HOT", m: "hot_ratio"}, column{head: "size (end)", m: "end_bytes"}, column{head: "rows (end)", m: "end_rows"},
		column{head: "stale", m: "stale"}, column{head: "lost", m: "lost"}, column{head: "linger max", m: "linger_max_s"}, column{head: "status", left: true})
	// Several workload entries (the network suite's one per RTT) would
	// print rows that cannot be told apart: name them.
	named := false
	for _, c := range cells {
		named = named || c.Name != cells[0].Name
	}
	for _, c := range cells {
		t.add(sessionsChurnRow(c, named)...)
	}
	return t
}

// sessionsChurnRow is one phase B cell: latency and throughput per phase,
// then the store's figures and the correctness counters.
func sessionsChurnRow(c *result.Cell, named bool) []cell {
	s := sessionsOf(c)
	cr, _ := c.Phase("create")
	rd, _ := c.Phase("read")
	latency := func(p metrics.Phase, v float64) cell {
		if sessOK(p) == 0 {
			return textCell("—")
		}
		return figureCell(us(v), v)
	}
	kaP50, kaP99 := textCell("per read"), textCell("per read")
	if ka, ok := c.Phase("keepalive"); ok {
		kaP50, kaP99 = latency(ka, ka.LatencyUs.P50), latency(ka, ka.LatencyUs.P99)
	}
	reap := textCell("native")
	if rp, ok := c.Phase("reap"); ok {
		reap = latency(rp, rp.LatencyUs.P99)
	}
	none := textCell("—")
	dead, hot, size, rows, linger := none, none, none, none, none
	if f := s.Figures; f != nil {
		if f.PeakDeadTuples != nil {
			dead = countCell(*f.PeakDeadTuples)
		}
		if f.HOTRatio != nil {
			hot = figureCell(fixed(100**f.HOTRatio, 0)+"%", *f.HOTRatio)
		}
		size, rows = figureCell(sessBytes(f.EndBytes), float64(f.EndBytes)), countCell(f.EndRows)
		if s.Counters != nil && s.Counters.Reaps > 0 {
			linger = figureCell(sessSeconds(f.LingerMaxS), f.LingerMaxS) // only stores with a reaper can tell
		}
	}
	stale, lost := none, none
	if k := s.Counters; k != nil {
		stale, lost = countCell(k.Stale), countCell(k.Lost)
		if f := s.Figures; f != nil && f.Evictions != nil && *f.Evictions > 0 {
			lost.text += fmt.Sprintf(" (+%d evicted)", *f.Evictions)
		}
	}
	design := s.Design
	if s.Replica != nil {
		design += " (reads on replica)"
	}
	if named {
		design = c.Name + ": " + design
	}
	return []cell{textCell(rowName(c)), textCell(design), figureCell(whole(cr.ThroughputOpsS), cr.ThroughputOpsS), figureCell(whole(rd.ThroughputOpsS), rd.ThroughputOpsS),
		latency(rd, rd.LatencyUs.P50), latency(rd, rd.LatencyUs.P99), kaP50, kaP99, reap, dead, hot, size, rows, stale, lost, linger, textCell(c.Status)}
}

// sessionsKnobTable is the designs side by side, knob by knob, as each
// cell recorded them (naive against tuned, and any design in between):
// a column per target and design, "no effect" where the store lacks the
// knob.
func sessionsKnobTable(cells []*result.Cell) *table {
	type design struct{ target, spec string }
	var designs []design
	values := map[design]map[string]string{}
	var knobs []string // "V1 persistence", in the order the cells list them
	names := map[string]string{}
	for _, c := range cells {
		s := sessionsOf(c)
		d := design{c.Target, s.Design}
		if len(s.Knobs) == 0 || values[d] != nil {
			continue
		}
		designs = append(designs, d)
		values[d] = map[string]string{}
		for _, k := range s.Knobs {
			if _, ok := names[k.Name]; !ok {
				names[k.Name] = strings.TrimSpace(k.V + " " + k.Name)
				knobs = append(knobs, k.Name)
			}
			v := k.Value
			if !k.Applies {
				v += " (no effect)"
			}
			values[d][k.Name] = v
		}
	}
	if len(designs) == 0 {
		return nil
	}
	cols := []column{{head: "knob", left: true}}
	for _, d := range designs {
		cols = append(cols, column{head: d.target + " " + d.spec, left: true})
	}
	t := newTable("sessions-knobs", "each design's knobs as run: naive against tuned, tuning by tuning", false, cols...)
	for _, k := range knobs {
		row := []cell{textCell(names[k])}
		for _, d := range designs {
			v, ok := values[d][k]
			if !ok {
				v = "—"
			}
			row = append(row, textCell(v))
		}
		t.add(row...)
	}
	return t
}

func sessionsReplicaTable(cells []*result.Cell) *table {
	t := newTable("sessions-replica", "reads on a streaming replica", false,
		column{head: "target", left: true}, column{head: "design", left: true}, column{head: "reads", m: "reads"}, column{head: "hits", m: "hits"},
		column{head: "misses", m: "misses"}, column{head: "of which lag", m: "lag_misses"}, column{head: "errors", m: "errors"}, column{head: "what the replica said", left: true})
	for _, c := range cells {
		s := sessionsOf(c)
		if r := s.Replica; r != nil {
			t.add(textCell(rowName(c)), textCell(s.Design), countCell(r.Reads), countCell(r.Hits), countCell(r.Misses), countCell(r.LagMisses),
				countCell(r.Errors), textCell(sessTrim(r.ErrorSample, 90)))
		}
	}
	return t.orNil()
}

// SessionsText prints the sessions section for the terminal; nothing when
// the result has no sessions cell.
func SessionsText(w io.Writer, r *result.Result) { sectionText(w, r, "sessions") }

// text prints the section for the terminal.
func (m *sessionsModel) text(w io.Writer) {
	if m.insert != nil {
		m.insert.textUnder(w, m.insertHead)
		indented(w, sessionsInsertNotes)
	}
	if m.churn != nil {
		fmt.Fprintln(w, "\n"+m.churnHead)
		fmt.Fprintln(w, sessionsChurnLegend)
		m.churn.text(w)
		indented(w, m.extras)
	}
	if m.replica != nil {
		m.replica.textUnder(w, sessionsReplicaHead)
		indented(w, []string{sessionsReplicaNote})
	}
	for _, n := range m.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w, "\n"+sessionsSQLHead)
	indented(w, append(sessionsSQL, sessionsSQLNote))
}

// indented prints each line after two spaces.
func indented(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// render writes the section to Markdown or HTML.
func (m *sessionsModel) render(d doc) {
	if m.insert != nil {
		d.heading("", m.insertHead)
		d.table(m.insert)
		d.para(strings.Join(sessionsInsertNotes, " "))
	}
	if m.churn != nil {
		d.heading("", m.churnHead)
		d.para(sessionsChurnLegend)
		d.table(m.churn)
		d.list(m.extras)
	}
	subsectionTable(d, "Designs, knob by knob", "", m.knobs)
	if m.replica != nil {
		d.heading("", sessionsReplicaHead)
		d.table(m.replica)
		d.para(sessionsReplicaNote)
	}
	var notes []string
	for _, n := range m.notes {
		notes = append(notes, "note: "+n)
	}
	d.list(notes)
	d.heading("", strings.TrimSuffix(sessionsSQLHead, ":"))
	d.list(sessionsSQL)
	d.para(sessionsSQLNote)
}

// sessExtras is what else a cell's store showed: vacuum and WAL for
// PostgreSQL, expired keys for Redis, evictions for Memcached, walk time
// for files, and the design as read back from the catalog.
func sessExtras(s *sessions.Summary) string {
	var parts []string
	f := s.Figures
	if f != nil {
		if f.AutovacuumRuns != nil {
			parts = append(parts, fmt.Sprintf("autovacuum runs %d", *f.AutovacuumRuns))
		}
		if f.TableBytes != nil && f.IndexBytes != nil {
			parts = append(parts, fmt.Sprintf("table %s + indexes %s", sessBytes(*f.TableBytes), sessBytes(*f.IndexBytes)))
		}
		if f.WALBytesPerOp != nil {
			parts = append(parts, fmt.Sprintf("WAL %s (%s B/op)", sessBytes(*f.WALBytes), fixed(*f.WALBytesPerOp, 0)))
		}
		if f.ExpiredKeys != nil {
			parts = append(parts, fmt.Sprintf("expired keys %s", thousands(*f.ExpiredKeys)))
		}
		if f.Evictions != nil {
			parts = append(parts, fmt.Sprintf("evictions %d, reclaimed %s", *f.Evictions, thousands(*f.Reclaimed)))
		}
		if f.WalkMaxS != nil {
			parts = append(parts, fmt.Sprintf("observation walk up to %s", sessSeconds(*f.WalkMaxS)))
		}
	}
	if k := s.Counters; k != nil {
		parts = append(parts, fmt.Sprintf("%s reads (%s of expired sessions), %s unjudged", thousands(k.Reads), thousands(k.ExpiredReads), thousands(k.Unjudged)))
		if k.Reaps > 0 {
			parts = append(parts, fmt.Sprintf("reaped %s in %s calls", thousands(k.Reaped), thousands(k.Reaps)))
		}
	}
	if c := s.Catalog; c["relpersistence"] != "" {
		parts = append(parts, fmt.Sprintf("catalog: relpersistence=%s reloptions=[%s] autovacuum_max_workers=%s", c["relpersistence"], c["reloptions"], c["autovacuum_max_workers"]))
	}
	return strings.Join(parts, "; ")
}

// sessionsNotes are the cells' notes a reader must see (a knob not in
// effect, an observation that failed, knobs a store has not), sorted.
func sessionsNotes(cells []*result.Cell) []string {
	seen := map[string]bool{}
	var lines []string
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	for _, c := range cells {
		s := sessionsOf(c)
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "NOT in effect") || strings.HasPrefix(n, "observation failed") {
				add(rowName(c) + " " + s.Design + ": " + n)
			}
		}
		var na []string
		for _, k := range s.Knobs {
			if !k.Applies && k.Name != "fsync" {
				na = append(na, k.Name)
			}
		}
		if len(na) > 0 && s.Phase == sessions.PhaseChurn {
			add(rowName(c) + ": knobs without effect there: " + strings.Join(na, ", "))
		}
	}
	sort.Strings(lines)
	return lines
}

// sessOK is how many of a phase's operations succeeded: its latency
// figures cover only those.
func sessOK(p metrics.Phase) int64 {
	n := p.Ops
	for _, e := range p.Errors {
		n -= e
	}
	return n
}

func sessSeconds(s float64) string {
	switch {
	case s >= 60:
		return fixed(s/60, 1) + " min"
	case s >= 10:
		return fixed(s, 0) + " s"
	case s >= 1:
		return fixed(s, 1) + " s"
	}
	return fixed(s*1000, 0) + " ms"
}

func sessScale(s float64) string {
	if s >= 1 || s <= 0 || math.IsNaN(s) {
		return shortest(s)
	}
	return "1/" + fixed(1/s, 0)
}

func sessBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fixed(float64(b)/(1<<30), 1) + " GiB"
	case b >= 1<<20:
		return fixed(float64(b)/(1<<20), 1) + " MiB"
	case b >= 1<<10:
		return fixed(float64(b)/(1<<10), 0) + " KiB"
	}
	return fmt.Sprintf("%d B", b)
}

func sessTrim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
