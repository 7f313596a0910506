package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// kvFigures are what one kv cell measured in one phase: the medians of a
// repeated run are the middle ones.
type kvFigures struct {
	ms  [3]float64 // total ms of each repeat
	p50 float64    // µs, the same in every repeat
}

// variantRun is cache-vs-db --quick in small: kv written one by one and
// kv-batch written 1,000 keys per call, at 1,000 and 10,000 keys, on two
// targets, three repeats each. The batch writes are the fastest cells of
// all, so a reading that mixes the two variants picks them.
func variantRun() (*result.Result, map[string]map[string]map[int64]kvFigures) {
	figures := map[string]map[string]map[int64]kvFigures{ // title -> target -> keys
		"kv write: total ms to write N keys one by one": {
			"postgres": {1000: {[3]float64{70, 63, 60}, 51}, 10000: {[3]float64{600, 700, 630}, 52}},
			"redis":    {1000: {[3]float64{26, 25, 27}, 21}, 10000: {[3]float64{260, 270, 250}, 22}},
		},
		"kv read: total ms to read N keys one by one": {
			"postgres": {1000: {[3]float64{41, 40, 42}, 31}, 10000: {[3]float64{410, 400, 420}, 32}},
			"redis":    {1000: {[3]float64{24, 23, 22}, 19}, 10000: {[3]float64{240, 230, 220}, 18}},
		},
		"kv-batch write: total ms to write N keys in bulk, 1,000 per call": {
			"postgres": {1000: {[3]float64{8.7, 9.5, 8.1}, 5534}, 10000: {[3]float64{55, 50, 60}, 5012}},
			"redis":    {1000: {[3]float64{1.5, 1.4, 1.3}, 1301}, 10000: {[3]float64{15, 14, 13}, 1302}},
		},
		"kv-batch read: total ms to read N keys one by one, after writing them in bulk": {
			"postgres": {1000: {[3]float64{46, 45, 47}, 33}, 10000: {[3]float64{460, 450, 470}, 34}},
			"redis":    {1000: {[3]float64{28, 29, 27}, 17}, 10000: {[3]float64{280, 290, 270}, 16}},
		},
	}
	r := &result.Result{Schema: result.Schema, ID: "variants", Status: result.StatusComplete, Repeat: 3,
		Targets: []result.Target{{Name: "postgres", Store: "postgres"}, {Name: "redis", Store: "redis"}}}
	phase := func(title, name, target string, keys int64, repeat int) metrics.Phase {
		f := figures[title][target][keys]
		s := f.ms[repeat] / 1000
		ops := keys
		return metrics.Phase{Name: name, Ops: ops, DurationS: s, ThroughputOpsS: float64(ops) / s,
			LatencyUs: metrics.Latency{P50: f.p50, P99: 2 * f.p50, Mean: f.p50}}
	}
	for _, target := range []string{"postgres", "redis"} {
		for repeat := range 3 {
			for _, v := range []struct {
				entry, write, read string
				batch              int
			}{
				{"kv", "kv write: total ms to write N keys one by one", "kv read: total ms to read N keys one by one", 0},
				{"kv-batch", "kv-batch write: total ms to write N keys in bulk, 1,000 per call", "kv-batch read: total ms to read N keys one by one, after writing them in bulk", 1000},
			} {
				for _, keys := range []int64{1000, 10000} {
					params := map[string]any{"keys": float64(keys), "value_size": float64(20), "clients": float64(1)}
					name := ""
					if v.batch > 0 {
						params["batch"], name = float64(v.batch), v.entry
					}
					r.Cells = append(r.Cells, result.Cell{
						ID: fmt.Sprintf("%s/%s/keys=%d", target, v.entry, keys), Target: target, Workload: "kv", Name: name,
						Params: params, Repeat: repeat + 1, Status: result.CellOK,
						Phases: []metrics.Phase{phase(v.write, "write", target, keys, repeat), phase(v.read, "read", target, keys, repeat)},
					})
				}
			}
		}
	}
	return r, figures
}

// median is the middle of three.
func median(ms [3]float64) float64 {
	return ms[0] + ms[1] + ms[2] - math.Max(ms[0], math.Max(ms[1], ms[2])) - math.Min(ms[0], math.Min(ms[1], ms[2]))
}

// titledBlocks splits a report's text at the lines that hold one of titles:
// title -> the lines after it, up to the next blank line.
func titledBlocks(t *testing.T, out string, titles []string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		for _, title := range titles {
			if !strings.Contains(l, title) {
				continue
			}
			if _, dup := got[title]; dup {
				t.Errorf("two tables titled %q", title)
			}
			got[title] = []string{}
			for _, row := range lines[i+1:] {
				if strings.TrimSpace(row) == "" && len(got[title]) > 0 {
					break
				}
				if strings.TrimSpace(row) != "" {
					got[title] = append(got[title], row)
				}
			}
		}
	}
	return got
}

// TestKVVariantTables: a result with kv cells written one by one and
// kv-batch cells written in bulk shows, in the terminal, Markdown and HTML
// alike, the one-by-one figures under a one-by-one title and the bulk ones
// under a bulk title, never one variant's figures under the other's title
// (the terminal once showed the batch cells as "one by one").
func TestKVVariantTables(t *testing.T) {
	r, figures := variantRun()
	titles := sortedKeys(figures)

	var term bytes.Buffer
	Text(&term, r)
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	// Every kv table of the terminal and Markdown has one of the titles.
	for name, out := range map[string]string{"text": term.String(), "markdown": md.String()} {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "total ms to") && !slices.ContainsFunc(titles, func(title string) bool { return strings.Contains(l, title) }) {
				t.Errorf("%s: a kv table titled %q", name, l)
			}
		}
	}

	// The terminal: target, total ms per key count, ops/s, p50 (its unit
	// per call for the bulk write), …
	textTables := titledBlocks(t, term.String(), titles)
	for _, title := range titles {
		rows := textTables[title]
		if len(rows) != 3 { // the head, two targets
			t.Errorf("text: %q has %d lines, want 3:\n%s", title, len(rows), term.String())
			continue
		}
		wantUnit := "p50 µs"
		if strings.Contains(title, "bulk, ") {
			wantUnit = "p50 µs per call"
		}
		if !strings.Contains(rows[0], wantUnit+"  ") {
			t.Errorf("text: %q head %q lacks %q", title, rows[0], wantUnit)
		}
		for _, row := range rows[1:] {
			f := strings.Fields(row)
			target := f[0]
			want := figures[title][target]
			if len(f) < 5 || f[1] != ms(median(want[1000].ms)) || f[2] != ms(median(want[10000].ms)) || f[4] != us(want[10000].p50) {
				t.Errorf("text: %q row %q, want %s ms, %s ms and p50 %s µs (the median repeats of %s)", title, row,
					ms(median(want[1000].ms)), ms(median(want[10000].ms)), us(want[10000].p50), target)
			}
		}
	}

	// Markdown: "## title", then | target | ms | ms | ops/s | p50 | p99 |.
	mdTables := titledBlocks(t, md.String(), titles)
	for _, title := range titles {
		if !strings.Contains(md.String(), "## "+title+"\n") {
			t.Errorf("markdown: no heading %q", title)
		}
		rows := mdTables[title]
		if len(rows) != 4 { // head, rule, two targets
			t.Errorf("markdown: %q has %d lines, want 4", title, len(rows))
			continue
		}
		for _, row := range rows[2:] {
			f := strings.Split(row, "|")
			target := strings.TrimSpace(f[1])
			want := figures[title][target]
			if got := []string{strings.TrimSpace(f[2]), strings.TrimSpace(f[3]), strings.TrimSpace(f[5])}; got[0] != num(median(want[1000].ms)) ||
				got[1] != num(median(want[10000].ms)) || got[2] != num(want[10000].p50) {
				t.Errorf("markdown: %q row %q, want %s, %s ms and p50 %s", title, row, num(median(want[1000].ms)), num(median(want[10000].ms)), num(want[10000].p50))
			}
		}
	}

	// HTML: each table captioned with its title holds its variant's figures.
	doc := htmlDoc(t, r)
	seen := map[string]int{}
	for _, table := range findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "data-table"); return v == "sweep" }) {
		caps := findAll(table, tag("caption"))
		if len(caps) != 1 {
			t.Fatalf("a sweep table with %d captions", len(caps))
		}
		title := text(caps[0])
		if figures[title] == nil {
			t.Errorf("html: a sweep table captioned %q", title)
			continue
		}
		for _, td := range findAll(table, withAttr("data-keys")) {
			if td.Data != "td" {
				continue
			}
			target, _ := attr(ancestor(td, "tr"), "data-target")
			var keys int64
			k, _ := attr(td, "data-keys")
			fmt.Sscan(k, &keys)
			if got, want := floatAttr(t, td, "data-v"), median(figures[title][target][keys].ms); math.Abs(got-want) > 1e-9 {
				t.Errorf("html: %q %s at %d keys: %v ms, want %v", title, target, keys, got, want)
			}
			seen[title]++
		}
	}
	for _, title := range titles {
		if seen[title] != 4 {
			t.Errorf("html: %q shows %d figures, want 4 (2 targets × 2 key counts)", title, seen[title])
		}
	}
}
