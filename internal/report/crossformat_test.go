package report

import (
	"bytes"
	"encoding/csv"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// TestSectionsInEveryFormat walks every sample result and every section
// kind: a section the result has is in the terminal summary (its model's
// text), in Markdown (its heading), in HTML (its <section>) and in the CSV
// (its tables' figures); a section the result lacks is in none.
func TestSectionsInEveryFormat(t *testing.T) {
	files, err := filepath.Glob("testdata/*-result.json*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample results: %v", err)
	}
	seen := map[string]bool{} // section kinds some sample has
	for _, f := range files {
		r, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(filepath.Base(f), "-result.json")
		out := renderAll(t, r)
		csvValues := csvValueSet(t, out["csv"])
		have := map[string]section{}
		for _, s := range sections(r, nil) {
			have[s.id] = s
		}
		for _, k := range sectionKinds {
			s, ok := have[k.id]
			seen[k.id] = seen[k.id] || ok
			inHTML := strings.Contains(out["html"], `<section id="`+k.id+`">`)
			inMD := strings.Contains(out["md"], "\n## "+mdText(k.title))
			if !ok {
				if inHTML || inMD {
					t.Errorf("%s: no %s section, yet HTML has it %v, Markdown %v", name, k.id, inHTML, inMD)
				}
				continue
			}
			var own bytes.Buffer
			s.model.text(&own)
			if own.Len() == 0 || !strings.Contains(out["text"], own.String()) {
				t.Errorf("%s: the terminal summary lacks the %s section", name, k.id)
			}
			if !inHTML || !strings.Contains(out["md"], "\n## "+mdText(s.heading())+"\n") {
				t.Errorf("%s: the %s section: in HTML %v, in Markdown %v", name, k.id, inHTML, inMD)
			}
			figures, missing := sectionFiguresIn(s, csvValues)
			if figures == 0 {
				t.Errorf("%s: the %s section has no figure to find in the CSV", name, k.id)
			}
			for _, m := range missing {
				t.Errorf("%s: the CSV lacks the %s section's figure %s", name, k.id, m)
			}
		}
	}
	// Every kind is walked: a new section kind needs a sample result that
	// has it (nodes-result.json, a real run of a managed Redis cluster and a
	// PostgreSQL replica set, is the nodes and replica-lag sections').
	for _, k := range sectionKinds {
		if !seen[k.id] {
			t.Errorf("%s: no sample result in testdata has this section", k.id)
		}
	}
}

// renderAll is the result in every format, by its --format name: text,
// md, html and csv.
func renderAll(t *testing.T, r *result.Result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"text", "md", "html", "csv"} {
		var b bytes.Buffer
		if err := reportFormats[f](&b, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.String()
	}
	return out
}

// csvValueSet is every value of the CSV report.
func csvValueSet(t *testing.T, report string) map[string]bool {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(report)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(CSVColumns, "value")
	values := map[string]bool{}
	for _, rec := range recs[1:] {
		values[rec[i]] = true
	}
	return values
}

// notCSVFigures are the section columns whose figures the CSV does not
// carry as such, and why: each is arithmetic of figures it has, or a
// per-second series (the CSV has no series, of any phase).
var notCSVFigures = map[string]string{
	"network.spread_us":                  "slowest p50 - fastest: the cells' latency_p50_us",
	"network.spread_per_rtt":             "spread ÷ rtt: the cells' latency_p50_us and their rtt_ms",
	"sessions-insert.mean_ms":            "latency_mean_us in ms",
	"sessions-insert.p50_ms":             "latency_p50_us in ms",
	"sessions-insert.p99_ms":             "latency_p99_us in ms",
	"sessions-insert.ratio":              "a target's mean ÷ the fastest's: the cells' latency_mean_us",
	"sessions-insert.ratio_p50":          "a target's p50 ÷ the fastest's: the cells' latency_p50_us",
	"payments-over-time.committed_per_s": "a per-second series",
	"cache-aside-hit-ratio.hit_ratio":    "a per-second series",
	"cache-aside-db-queries.db_queries":  "a per-second series",
	"replay-rate.trace_ops_s":            "a per-second series",
	"replay-rate.achieved_ops_s":         "a per-second series",
}

// sectionFiguresIn counts the figures of the section's tables (cells with
// an exact value) and names those whose value no CSV row has, by
// table.column, the columns of notCSVFigures aside.
func sectionFiguresIn(s section, csvValues map[string]bool) (figures int, missing []string) {
	var tables []*table
	s.model.render(tableCollector{&tables})
	for _, tb := range tables {
		for _, row := range tb.rows {
			for i, c := range row {
				if c.v == "" {
					continue
				}
				col := tb.name + "." + tb.cols[min(i, len(tb.cols)-1)].m
				if _, derived := notCSVFigures[col]; derived {
					continue
				}
				figures++
				if !csvValues[c.v] && !slices.Contains(missing, col) {
					missing = append(missing, col)
				}
			}
		}
	}
	return figures, missing
}

// tableCollector gathers the tables a section renders, its charts' included.
type tableCollector struct{ tables *[]*table }

func (d tableCollector) heading(string, string)     {}
func (d tableCollector) para(string)                {}
func (d tableCollector) list([]string)              {}
func (d tableCollector) table(t *table)             { *d.tables = append(*d.tables, t) }
func (d tableCollector) lineChart(c *lineChartSpec) { d.table(c.table) }
func (d tableCollector) end()                       {}

// TestTestdataStaysSmall: the samples and goldens stay under 1.5 MB (issue
// 29: they weighed three times all the Go source): gzip a new sample, and
// keep a suite's HTML golden an outline (htmlGolden).
func TestTestdataStaysSmall(t *testing.T) {
	var total int64
	err := filepath.WalkDir("testdata", func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 1500000 {
		t.Errorf("internal/report/testdata holds %d bytes, more than 1.5 MB", total)
	}
}
