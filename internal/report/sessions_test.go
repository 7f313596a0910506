package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/sessions"
)

// TestSessionsText: phase A beside the article's ratios, phase B with the
// figures the issue asks for, the replica table, and nothing at all for a
// result without sessions cells.
func TestSessionsText(t *testing.T) {
	ins := func(v string, meanUs float64) result.Cell {
		return result.Cell{Target: "postgres", Workload: "sessions", Name: "phase-a", Status: result.CellOK, Params: map[string]any{"variant": v},
			Phases:   []metrics.Phase{{Name: "insert", Ops: 100, LatencyUs: metrics.Latency{Mean: meanUs, P50: meanUs, P99: 3 * meanUs}}},
			Sessions: &sessions.Summary{Phase: sessions.PhaseInsert, Store: "postgres", Variant: v, VariantDoc: "what " + v + " sends", Inserts: 100}}
	}
	dead, hot, tbl, idx := int64(1234), 0.87, int64(1<<20), int64(64<<10)
	churn := result.Cell{Target: "postgres", Workload: "sessions", Name: "phase-b", Status: result.CellOK,
		Phases: []metrics.Phase{
			{Name: "create", Ops: 800, ThroughputOpsS: 200},
			{Name: "read", Ops: 4000, ThroughputOpsS: 1000, LatencyUs: metrics.Latency{P50: 210, P99: 1800}},
			{Name: "keepalive", Ops: 40, LatencyUs: metrics.Latency{P50: 900, P99: 2500}},
			{Name: "reap", Ops: 8, LatencyUs: metrics.Latency{P99: 4000}},
		},
		Sessions: &sessions.Summary{Phase: sessions.PhaseChurn, Store: "postgres", Design: "tuned",
			Timing:   &sessions.Timing{Scale: 1.0 / 450, TTLS: 4, DurationS: 8, WarmupS: 5.3},
			Counters: &sessions.Counters{Reads: 5000, Stale: 0, Lost: 2, Reaps: 8, Reaped: 900},
			Figures:  &sessions.Figures{PeakDeadTuples: &dead, HOTRatio: &hot, TableBytes: &tbl, IndexBytes: &idx, EndBytes: tbl + idx, EndRows: 900, LingerMaxS: 0.7}}}
	replica := churn
	replica.Sessions = &sessions.Summary{Phase: sessions.PhaseChurn, Store: "postgres", Design: "tuned,persistence=unlogged",
		Counters: &sessions.Counters{Reads: 10}, Replica: &sessions.Replica{Reads: 10, Misses: 10, Errors: 10, ErrorSample: "cannot access temporary or unlogged relations"}}
	// A MariaDB target (the mysql store) names its target in the note on
	// knobs it has not.
	maria := churn
	maria.Target = "mariadb"
	maria.Sessions = &sessions.Summary{Phase: sessions.PhaseChurn, Store: "mysql", Design: "tuned",
		Counters: &sessions.Counters{Reads: 10}, Knobs: []sessions.KnobValue{{Name: "fillfactor", Applies: false}, {Name: "payload", Applies: true}}}
	r := &result.Result{Article: sessionsArticleOf(0.24, 8), Cells: []result.Cell{ins("unlogged", 40), ins("logged", 320), ins("tx", 120), churn, replica, maria}}
	// The report reads results back from JSON.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back result.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	SessionsText(&out, &back)
	s := out.String()
	for _, want := range []string{
		"phase A", "× unlogged", "8.00", "3.00", "0.24", "3.2",
		"phase B", "1/450", "1,234", "87%", "1,800", "2,500", "reads on replica",
		"cannot access temporary or unlogged relations", "FOR UPDATE SKIP LOCKED",
		"note: mariadb: knobs without effect there: fillfactor\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	out.Reset()
	SessionsText(&out, &result.Result{Cells: []result.Cell{{Workload: "kv"}}})
	if out.Len() != 0 {
		t.Errorf("output without sessions cells: %q", out.String())
	}
}

// sessionsArticleOf is the sessions suite's article as a result carries it,
// with the logged variant's mean ms and × unlogged set to loggedMs and
// loggedRatio.
func sessionsArticleOf(loggedMs, loggedRatio float64) *result.Article {
	f := func(v float64) *float64 { return &v }
	return &result.Article{Title: "Storing sessions or cache data in PostgreSQL", Tables: []result.ArticleTable{{
		Metric: "mean_ms", Unit: "ms", Workload: "phase-a", Phase: "insert", Param: "variant",
		Columns: []string{"unlogged", "logged", "tx", "function", "tx-string", "function-sync"},
		Rows: []result.ArticleRow{{Label: "PostgreSQL 15 (article)", Target: "postgres",
			Values: []*float64{f(0.03), f(loggedMs), f(0.097), f(0.037), nil, nil},
			Ratios: []*float64{f(1), f(loggedRatio), f(3.2), f(1.23), nil, nil}}},
	}}}
}

// TestSessionsArticleFromResult: phase A's article columns come from the
// result's own article, so a result is rendered with the figures it was
// made with, and one without them shows none, never today's.
func TestSessionsArticleFromResult(t *testing.T) {
	cell := result.Cell{Target: "postgres", Workload: "sessions", Name: "phase-a", Status: result.CellOK, Params: map[string]any{"variant": "logged"},
		Phases:   []metrics.Phase{{Name: "insert", Ops: 100, LatencyUs: metrics.Latency{Mean: 300, P50: 300, P99: 900}}},
		Sessions: &sessions.Summary{Phase: sessions.PhaseInsert, Store: "postgres", Variant: "logged", VariantDoc: "INSERT", Inserts: 100}}
	row := func(a *result.Article) string {
		var out bytes.Buffer
		SessionsText(&out, &result.Result{Article: a, Cells: []result.Cell{cell}})
		for line := range strings.Lines(out.String()) {
			if strings.HasPrefix(line, "postgres") && strings.Contains(line, "logged") {
				return strings.Join(strings.Fields(line), " ")
			}
		}
		t.Fatalf("no phase A row for postgres logged:\n%s", out.String())
		return ""
	}
	// Columns: target variant mean p50 p99 × (p50) article-ms article-× what.
	if got, want := row(sessionsArticleOf(0.5, 9.9)), "postgres logged 0.300 0.300 0.900 — — 0.5 9.9 INSERT"; got != want {
		t.Errorf("with the result's article:\n got %q\nwant %q", got, want)
	}
	if got, want := row(nil), "postgres logged 0.300 0.300 0.900 — — — — INSERT"; got != want {
		t.Errorf("a result without an article:\n got %q\nwant %q", got, want)
	}
}
