package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// TestReplaySection: the replay sample (a real run: the Twitter sample
// trace on memory and Redis at speed 2 and max) in every format, its
// terminal and Markdown text byte for byte, its HTML as an outline; the
// table's figures are the cells' own, and each timed cell has its rate
// chart beside the trace's.
func TestReplaySection(t *testing.T) {
	r, err := result.Read("testdata/replay-result.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	var txt, md, page bytes.Buffer
	Text(&txt, r)
	golden(t, "replay.txt.golden", txt.Bytes())
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "replay.md.golden", md.Bytes())
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	htmlGolden(t, "replay.html.golden", page.Bytes())

	m := newReplayModel(r, nil)
	if m == nil || len(m.verdict.rows) != len(r.Cells) {
		t.Fatalf("model %v: want a row per cell (%d)", m, len(r.Cells))
	}
	timed := 0
	for i, c := range r.Cells {
		s := c.Replay
		row := m.verdict.rows[i]
		if row[0].text != c.Label() || row[4].text != thousands(s.Requests) || row[5].text != thousands(s.Replayed) || row[7].text != thousands(s.Hits) {
			t.Errorf("row %d %v, cell %s %+v", i, row, c.ID, s)
		}
		if s.Speed != "max" {
			timed++
			if s.LatenessUs == nil || row[10].v != exact(s.LatenessUs.P99) {
				t.Errorf("%s: lateness p99 cell %+v, summary %+v", c.ID, row[10], s.LatenessUs)
			}
		} else if row[10].text != "—" {
			t.Errorf("%s at max speed shows a lateness %q", c.ID, row[10].text)
		}
	}
	if len(m.rates) != timed || timed == 0 {
		t.Errorf("%d rate charts for %d timed cells", len(m.rates), timed)
	}
	if n := strings.Count(page.String(), `data-chart="replay-rate"`); n != len(m.rates) {
		t.Errorf("HTML has %d rate charts, want %d", n, len(m.rates))
	}
	var csv bytes.Buffer
	if err := CSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	for _, metric := range []string{",replay_requests,2000,count", ",replay_unsupported_gat,", ",replay_lateness_p99_us,"} {
		if !strings.Contains(csv.String(), metric) {
			t.Errorf("the CSV has no %s", metric)
		}
	}
}

// A long replay's rates are averaged into at most rateBuckets spans.
func TestReplayRateLine(t *testing.T) {
	traced := make([]int64, 30)
	var series []metrics.Second
	for i := range traced {
		traced[i] = int64(100 * (i / 3)) // 0,0,0,100,100,100,…
		series = append(series, metrics.Second{T: int64(i), Ops: traced[i] + 1})
	}
	got := replayRateLine("c", traced, series)
	want := "c (req/s, 3 s a span): trace 0 100 200 300 400 500 600 700 800 900 · achieved 1 101 201 301 401 501 601 701 801 901"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
