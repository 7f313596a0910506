package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload/sessions"
)

// SessionsText prints the sessions workload's cells for the terminal:
// phase A beside the article's figures and ratios, phase B per target and
// design (latency, throughput, what the store's internals did, the
// correctness counters), the read replica, and the SQL corrections. It
// prints nothing when the result has no sessions cell.
func SessionsText(w io.Writer, r *result.Result) {
	var insert, churn []*result.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		switch {
		case c.Sessions == nil:
		case c.Sessions.Phase == sessions.PhaseInsert:
			insert = append(insert, c)
		default:
			churn = append(churn, c)
		}
	}
	if len(insert)+len(churn) == 0 {
		return
	}
	sessionsInsert(w, insert)
	sessionsChurn(w, churn)
	sessionsReplica(w, churn)
	sessionsNotes(w, append(insert, churn...))
	fmt.Fprintln(w, "\nSessions SQL: the article's statements have errors; storebench runs the corrected forms (workloads/sessions.md, errata):")
	for _, l := range []string{
		"read       SELECT payload FROM sessions WHERE id = $1 AND expires_at > now()",
		"keepalive  UPDATE sessions SET expires_at = now() + ttl WHERE id = ANY($1::bigint[]) AND expires_at > now() [AND expires_at < now() + refresh]",
		"reap       DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < now() LIMIT n FOR UPDATE SKIP LOCKED)",
		"ids        BIGINT GENERATED ALWAYS AS IDENTITY (CACHE 100); every insert sets expires_at = now() + interval (the naive table has no default)",
		"commit     synchronous_commit=off by SET LOCAL in the transaction or set_config(…, true) in new_session(): a function SET clause would be undone before the commit",
		"timestamp  a TIMESTAMP expires_at is compared with LOCALTIMESTAMP, never with now() through the session time zone",
	} {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintln(w, "  The keepalive's \"AND expires_at > now()\" goes beyond the spec: without it a flush brings back a session that expired since it was read.")
}

func sessionsInsert(w io.Writer, cells []*result.Cell) {
	if len(cells) == 0 {
		return
	}
	n := cells[0].Sessions.Inserts
	fmt.Fprintf(w, "\nSessions phase A: the article's micro-benchmark, %s inserts of 250-character JSON one by one on one connection\n", thousands(n))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tvariant\tmean ms\tp50 ms\tp99 ms\t× unlogged\t(p50)\tarticle ms\tarticle ×\twhat it sends")
	unlogged, unlogged50 := map[string]float64{}, map[string]float64{}
	for _, c := range cells {
		if p, ok := c.Phase("insert"); ok && c.Sessions.Variant == "unlogged" && c.Status == result.CellOK {
			unlogged[c.Target], unlogged50[c.Target] = p.LatencyUs.Mean, p.LatencyUs.P50
		}
	}
	for _, c := range cells {
		v := c.Sessions.Variant
		p, ok := c.Phase("insert")
		if !ok || c.Status != result.CellOK {
			fmt.Fprintf(tw, "%s\t%s\t—\t—\t—\t—\t—\t%s\t%s\t%s (%s)\n", rowName(c), v, sessArticle(sessions.ArticleMs, v), sessArticle(sessions.ArticleRatio, v), c.Sessions.VariantDoc, c.Status)
			continue
		}
		ratio, ratio50 := "—", "—"
		if u := unlogged[c.Target]; u > 0 {
			ratio = fixed(p.LatencyUs.Mean/u, 2)
		}
		if u := unlogged50[c.Target]; u > 0 {
			ratio50 = fixed(p.LatencyUs.P50/u, 2)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", rowName(c), v, fixed(p.LatencyUs.Mean/1000, 3), fixed(p.LatencyUs.P50/1000, 3), fixed(p.LatencyUs.P99/1000, 3),
			ratio, ratio50, sessArticle(sessions.ArticleMs, v), sessArticle(sessions.ArticleRatio, v), c.Sessions.VariantDoc)
	}
	tw.Flush()
	fmt.Fprintln(w, "  Compare the ratios, not the milliseconds (the article: postgres:15-alpine in local Docker); (p50) is the ratio of medians, which a few")
	fmt.Fprintln(w, "  stalls cannot move. tx vs tx-string separates the round trips from the commit mode, function vs function-sync the commit mode from the call form.")
}

func sessArticle(m map[string]float64, v string) string {
	if x, ok := m[v]; ok {
		return fmt.Sprint(x)
	}
	return "—"
}

func sessionsChurn(w io.Writer, cells []*result.Cell) {
	if len(cells) == 0 {
		return
	}
	if t := cells[0].Sessions.Timing; t != nil {
		fmt.Fprintf(w, "\nSessions phase B: steady churn; TTL %s (30 min × %s), every interval scaled with it; %s measured after a %s warm-up\n",
			sessSeconds(t.TTLS), sessScale(t.Scale), sessSeconds(t.DurationS), sessSeconds(t.WarmupS))
	} else {
		fmt.Fprintln(w, "\nSessions phase B: steady churn")
	}
	fmt.Fprintln(w, "(latency µs per call; keepalive calls carry many ids; stale = a session read after it expired, lost = a live session missing; linger = longest an expired session stayed stored)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Several workload entries (the network suite's one per RTT) would
	// print rows that cannot be told apart: name them.
	named := false
	for _, c := range cells {
		named = named || c.Name != cells[0].Name
	}
	fmt.Fprintln(tw, "target\tdesign\tcreates/s\treads/s\tread p50\tread p99\tkeepalive p50\tkeepalive p99\treap p99\tpeak dead tuples\tHOT\tsize (end)\trows (end)\tstale\tlost\tlinger max\tstatus\t")
	for _, c := range cells {
		s := c.Sessions
		cr, _ := c.Phase("create")
		rd, _ := c.Phase("read")
		kaP50, kaP99 := "per read", "per read"
		if ka, ok := c.Phase("keepalive"); ok {
			kaP50, kaP99 = sessUs(ka.LatencyUs.P50, sessOK(ka)), sessUs(ka.LatencyUs.P99, sessOK(ka))
		}
		reap := "native"
		if rp, ok := c.Phase("reap"); ok {
			reap = sessUs(rp.LatencyUs.P99, sessOK(rp))
		}
		dead, hot, size, rows, linger := "—", "—", "—", "—", "—"
		if f := s.Figures; f != nil {
			if f.PeakDeadTuples != nil {
				dead = thousands(*f.PeakDeadTuples)
			}
			if f.HOTRatio != nil {
				hot = fixed(100**f.HOTRatio, 0) + "%"
			}
			size = sessBytes(f.EndBytes)
			rows = thousands(f.EndRows)
			if s.Counters != nil && s.Counters.Reaps > 0 {
				linger = sessSeconds(f.LingerMaxS) // only stores with a reaper can tell
			}
		}
		stale, lost := "—", "—"
		if k := s.Counters; k != nil {
			stale, lost = thousands(k.Stale), thousands(k.Lost)
			if f := s.Figures; f != nil && f.Evictions != nil && *f.Evictions > 0 {
				lost += fmt.Sprintf(" (+%d evicted)", *f.Evictions)
			}
		}
		design := s.Design
		if s.Replica != nil {
			design += " (reads on replica)"
		}
		if named {
			design = c.Name + ": " + design
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", rowName(c), design,
			whole(cr.ThroughputOpsS), whole(rd.ThroughputOpsS),
			sessUs(rd.LatencyUs.P50, sessOK(rd)), sessUs(rd.LatencyUs.P99, sessOK(rd)), kaP50, kaP99, reap, dead, hot, size, rows, stale, lost, linger, c.Status)
	}
	tw.Flush()
	for _, c := range cells {
		if line := sessExtras(c.Sessions); line != "" {
			fmt.Fprintf(w, "  %s %s: %s\n", rowName(c), c.Sessions.Design, line)
		}
	}
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

func sessionsReplica(w io.Writer, cells []*result.Cell) {
	var rc []*result.Cell
	for _, c := range cells {
		if c.Sessions.Replica != nil {
			rc = append(rc, c)
		}
	}
	if len(rc) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSessions on a read replica (reads on a streaming replica; creates, keepalives and reaps on the primary)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tdesign\treads\thits\tmisses\tof which lag\terrors\twhat the replica said")
	for _, c := range rc {
		r := c.Sessions.Replica
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", rowName(c), c.Sessions.Design, thousands(r.Reads), thousands(r.Hits),
			thousands(r.Misses), thousands(r.LagMisses), thousands(r.Errors), sessTrim(r.ErrorSample, 90))
	}
	tw.Flush()
	fmt.Fprintln(w, "  An UNLOGGED table is not replicated: it exists on the replica but PostgreSQL refuses to read it there, so every read is a miss.")
}

func sessionsNotes(w io.Writer, cells []*result.Cell) {
	seen := map[string]bool{}
	var lines []string
	for _, c := range cells {
		for _, n := range c.Sessions.Notes {
			if strings.HasPrefix(n, "NOT in effect") || strings.HasPrefix(n, "observation failed") {
				l := rowName(c) + " " + c.Sessions.Design + ": " + n
				if !seen[l] {
					seen[l] = true
					lines = append(lines, l)
				}
			}
		}
		var na []string
		for _, k := range c.Sessions.Knobs {
			if !k.Applies && k.Name != "fsync" {
				na = append(na, k.Name)
			}
		}
		if len(na) > 0 && c.Sessions.Phase == sessions.PhaseChurn {
			l := rowName(c) + ": knobs without effect there: " + strings.Join(na, ", ")
			if !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintf(w, "  note: %s\n", l)
	}
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

func sessUs(v float64, ops int64) string {
	if ops == 0 {
		return "—"
	}
	return us(v)
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
