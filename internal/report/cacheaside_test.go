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
	htmlGolden(t, cacheAsideSample+".html.golden", page.Bytes())
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

// TestCacheAsideCapacity: cells that searched their capacity get a verdict
// column per SLO ("≥" for a lower bound, "none" when no rate met it, "—"
// for a cell that did not search) and the at-capacity table, in the
// terminal, Markdown and HTML alike.
func TestCacheAsideCapacity(t *testing.T) {
	r := readSuiteSample(t, cacheAsideSample)
	if len(r.Cells) < 3 {
		t.Fatalf("sample has %d cells", len(r.Cells))
	}
	const slo = "p99<=10ms"
	r.Cells[0].CacheAside.AtCapacity = []cacheaside.AtCapacity{{SLO: slo, Found: true, OpsS: 2400, Requests: 4800, DBQueriesPerRequest: 1, DBQueriesPerS: 2400}}
	r.Cells[1].CacheAside.AtCapacity = []cacheaside.AtCapacity{{SLO: slo, Found: true, AtLeast: true, OpsS: 9100, Requests: 18200, HitRatio: 0.93, DBQueriesPerRequest: 0.12, DBQueriesPerS: 1092, Stale: 3}}
	r.Cells[2].CacheAside.AtCapacity = []cacheaside.AtCapacity{{SLO: slo}}
	var txt bytes.Buffer
	Text(&txt, r)
	for _, want := range []string{"capacity at p99<=10ms ops/s", "cache-aside at capacity", "≥ 9,100"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("terminal lacks %q", want)
		}
	}
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	modelTablesIn(t, r, md)
	verdict := sectionTable(t, doc, "cache-aside", "cache-aside")
	for i, want := range []float64{2400, 9100} {
		if got := figureIn(t, rowOf(t, verdict, r.Cells[i].Label()), "capacity_ops_s_1"); got != want {
			t.Errorf("%s: capacity %v on the page, want %v", r.Cells[i].Label(), got, want)
		}
	}
	if got := text(rowOf(t, verdict, r.Cells[2].Label())); !strings.Contains(got, "none") {
		t.Errorf("no rate met the SLO, row says %q", got)
	}
	at := sectionTable(t, doc, "cache-aside", "cache-aside-capacity")
	row := rowOf(t, at, r.Cells[1].Label())
	for m, want := range map[string]float64{"hit_ratio": 0.93, "db_queries_per_request": 0.12, "db_queries_per_s": 1092, "stale": 3} {
		if got := figureIn(t, row, m); got != want {
			t.Errorf("at capacity %s: page says %v, want %v", m, got, want)
		}
	}
	// A cell that searched nothing has no capacity to show.
	r.Cells[1].CacheAside.AtCapacity, r.Cells[2].CacheAside.AtCapacity = nil, nil
	m := newCacheAsideModel(r, nil)
	if last := m.verdict.rows[1][len(m.verdict.rows[1])-1].text; last != "—" {
		t.Errorf("a cell without a search: capacity %q, want —", last)
	}
}

// TestCacheAsideCSV: the verdict's figures and each capacity found are
// cell-level rows of the CSV.
func TestCacheAsideCSV(t *testing.T) {
	r := readSuiteSample(t, cacheAsideSample)
	r.Cells[1].CacheAside.AtCapacity = []cacheaside.AtCapacity{{SLO: "p99<=10ms", Found: true, AtLeast: true, OpsS: 9100, HitRatio: 0.93}, {SLO: "p99<=1ms"}}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{",,cache_aside_hit_ratio,0.6669009135628953,fraction", ",,cache_aside_capacity_ops_s_at_p99<=10ms,9100,ops/s",
		",,cache_aside_capacity_at_least_at_p99<=10ms,1,bool", ",,cache_aside_capacity_hit_ratio_at_p99<=10ms,0.93,fraction"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	if strings.Contains(b.String(), "at_p99<=1ms") {
		t.Error("CSV has a capacity for an SLO no rate met")
	}
}
