package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// TestReplicaLagInEveryFormat: a replica set's lag reaches the terminal,
// Markdown, HTML and CSV; a run without replica sets has no section, and a
// phase whose lag the primary could not time shows a dash, not a zero.
func TestReplicaLagInEveryFormat(t *testing.T) {
	r := readSample(t)
	var plain bytes.Buffer
	Text(&plain, r)
	if strings.Contains(plain.String(), "replica lag") {
		t.Fatal("a run without replica sets has a replica lag section")
	}
	r.Cells[0].Phases[0].ReplicaLag = &metrics.ReplicaLag{Source: "test", Replicas: 2, Streaming: 2, Samples: 31, TimedSamples: 31,
		ReplayMs: metrics.LagFigures{P50: 0.412, Max: 3.25}, FlushMs: metrics.LagFigures{P50: 0.2, Max: 1.5},
		Bytes: metrics.LagFigures{P50: 640, Max: 12800}, CatchUpMs: 4.5}
	if len(r.Cells[0].Phases) > 1 {
		r.Cells[0].Phases[1].ReplicaLag = &metrics.ReplicaLag{Source: "test", Replicas: 2, Streaming: 1, Samples: 3, Bytes: metrics.LagFigures{Max: 99}}
	}
	text, md, html, csvOut := everyFormat(t, r)
	label, phase := r.Cells[0].Label(), r.Cells[0].Phases[0].Name
	want := label + " " + phase + " 2 of 2 31 0.41 3.25 1.50 640 12,800 4.5"
	if !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	if len(r.Cells[0].Phases) > 1 {
		untimed := label + " " + r.Cells[0].Phases[1].Name + " 1 of 2 3 — — — 0 99 0.0"
		if !strings.Contains(text, untimed) {
			t.Errorf("text lacks %q:\n%s", untimed, text)
		}
	}
	if !strings.Contains(md, "## Replica lag") || !strings.Contains(md, "| 2 of 2 | 31 | 0.41 | 3.25 | 1.50 | 640 | 12,800 | 4.5 |") {
		t.Errorf("markdown lacks the replica lag table:\n%s", md)
	}
	if !strings.Contains(html, `data-m="replay_max_ms" data-v="3.25">3.25</td>`) {
		t.Error("HTML lacks the replay lag cell")
	}
	for _, w := range []string{",replica_lag_replay_max_ms,3.25,ms", ",replica_lag_bytes_max,12800,bytes", ",replica_lag_streaming,1,count"} {
		if !strings.Contains(csvOut, w) {
			t.Errorf("CSV lacks %q", w)
		}
	}
}

// everyFormat renders r in every format; the text with each line's fields
// joined by one space, so a test finds a row whatever the column widths.
func everyFormat(t *testing.T, r *result.Result) (text, md, html, csv string) {
	t.Helper()
	var tb, mb, hb, cb bytes.Buffer
	Text(&tb, r)
	for _, f := range []func() error{func() error { return Markdown(&mb, r) }, func() error { return HTML(&hb, r) }, func() error { return CSV(&cb, r) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	var rows []string
	for _, line := range strings.Split(tb.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	return strings.Join(rows, "\n"), mb.String(), hb.String(), cb.String()
}
