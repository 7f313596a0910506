package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/cacheaside"
)

// The cache-aside sample (testdata/cache-aside-result.json) is a real run
// of the workload on managed servers (PostgreSQL alone, with Redis and
// the four stampede protections, with Memcached and the update policy, at
// 1,500 requests/s), written before the workload was registered with the
// runner, so its cells were assembled by the test that ran it.
const cacheAsideSample = "cache-aside"

// TestCacheAsideGolden: the section in every format, byte for byte.
func TestCacheAsideGolden(t *testing.T) {
	r := readSuiteSample(t, cacheAsideSample)
	var txt, md, page bytes.Buffer
	Text(&txt, r)
	golden(t, cacheAsideSample+".txt.golden", txt.Bytes())
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, cacheAsideSample+".md.golden", md.Bytes())
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	golden(t, cacheAsideSample+".html.golden", page.Bytes())
}

// TestCacheAsideInEveryFormat: the verdict and stampede tables carry each
// cell's figures as the summary has them, in HTML and Markdown alike, and
// the HTML has both charts.
func TestCacheAsideInEveryFormat(t *testing.T) {
	r := readSuiteSample(t, cacheAsideSample)
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	modelTablesIn(t, r, md)
	verdict := sectionTable(t, doc, "cache-aside", "cache-aside")
	for i := range r.Cells {
		c := &r.Cells[i]
		s := c.CacheAside
		row := rowOf(t, verdict, c.Label())
		for m, want := range map[string]float64{"hit_ratio": s.HitRatio, "db_queries_per_s": s.DBQueriesPerS, "stale": float64(s.Staleness.Stale),
			"p99_all_us": s.Latency.All.P99, "monotonic_broken": float64(s.Staleness.MonotonicBroken)} {
			if got := figureIn(t, row, m); got != want {
				t.Errorf("%s %s: page says %v, result %v", c.Label(), m, got, want)
			}
		}
	}
	stampede := text(sectionTable(t, doc, "cache-aside", "cache-aside-stampede"))
	for _, pr := range []string{"none", "lease", "xfetch", "coalesce"} {
		if !strings.Contains(stampede, pr) {
			t.Errorf("stampede table has no %s row", pr)
		}
	}
	for _, id := range []string{"chart-cache-aside-hit-ratio", "chart-cache-aside-db-queries"} {
		if len(findAll(doc, func(n *html.Node) bool { return idOf(n) == id })) == 0 {
			t.Errorf("HTML has no chart %s", id)
		}
	}
}

// TestCacheAsideSaved: the database load saved compares with the
// database-alone cell of the same database, requests and offered rate, and
// only then; server CPU per request shows where measured.
func TestCacheAsideSaved(t *testing.T) {
	cpu := 12.5
	alone := &cacheaside.Summary{Database: "postgres", Params: cacheaside.CellParams{RateOpsS: 1000}, DBQueriesPerS: 1000}
	cached := &cacheaside.Summary{Database: "postgres", Cache: "redis", CacheUsed: true, Params: cacheaside.CellParams{RateOpsS: 1000}, DBQueriesPerS: 100,
		CPU: cacheaside.CPU{CacheUsPerRequest: &cpu}}
	otherRate := &cacheaside.Summary{Database: "postgres", Cache: "redis", CacheUsed: true, Params: cacheaside.CellParams{RateOpsS: 2000}, DBQueriesPerS: 100}
	otherKeys := &cacheaside.Summary{Database: "postgres", Cache: "redis", CacheUsed: true, Params: cacheaside.CellParams{RateOpsS: 1000, Keys: 5}, DBQueriesPerS: 100}
	otherDB := &cacheaside.Summary{Database: "mysql", Cache: "redis", CacheUsed: true, Params: cacheaside.CellParams{RateOpsS: 1000}, DBQueriesPerS: 100}
	r := &result.Result{Cells: []result.Cell{
		{ID: "a", Target: "pg", Workload: "cache-aside", CacheAside: alone},
		{ID: "b", Target: "pg+redis", Workload: "cache-aside", CacheAside: cached},
		{ID: "c", Target: "pg+redis", Workload: "cache-aside", Name: "fast", CacheAside: otherRate},
		{ID: "d", Target: "pg+redis", Workload: "cache-aside", Name: "keys", CacheAside: otherKeys},
		{ID: "e", Target: "mysql+redis", Workload: "cache-aside", CacheAside: otherDB},
	}}
	m := newCacheAsideModel(r, nil)
	col := func(head string) int {
		for i, c := range m.verdict.cols {
			if c.head == head {
				return i
			}
		}
		t.Fatalf("no column %q", head)
		return -1
	}
	saved, cacheCPU := col("db load saved"), col("cache CPU µs/req")
	for i, want := range []string{"—", "90.0%", "—", "—", "—"} {
		if got := m.verdict.rows[i][saved].text; got != want {
			t.Errorf("row %d: db load saved %q, want %q", i, got, want)
		}
	}
	if got := m.verdict.rows[1][cacheCPU].text; got != "12.5" {
		t.Errorf("cache CPU %q, want 12.5", got)
	}
	if got := m.verdict.rows[0][cacheCPU].text; got != "—" {
		t.Errorf("unmeasured cache CPU %q, want —", got)
	}
}
