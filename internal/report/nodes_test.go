package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
)

// TestNodesInEveryFormat: the ops per node of a cluster's phases reach the
// terminal, Markdown, HTML and CSV; a run without clusters has no section.
func TestNodesInEveryFormat(t *testing.T) {
	r := readSample(t)
	var plain bytes.Buffer
	Text(&plain, r)
	if strings.Contains(plain.String(), "ops per node") {
		t.Fatal("a run without clusters has an ops per node section")
	}
	for j := range r.Cells[0].Phases {
		r.Cells[0].Phases[j].Nodes = []metrics.NodeOps{
			{Addr: "127.0.0.1:7001", Role: "primary", Reads: 3364, Writes: 10, Share: 0.3364},
			{Addr: "127.0.0.1:7002", Role: "replica", Reads: 6636, Writes: 0, Other: 2, Share: 0.6636},
		}
	}
	text, md, html, csvOut := everyFormat(t, r)
	label, phase := r.Cells[0].Label(), r.Cells[0].Phases[0].Name
	want := label + " " + phase + " 127.0.0.1:7001 primary 3,364 10 0 33.6%"
	if !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	if !strings.Contains(md, "## Ops per node") || !strings.Contains(md, "| 127.0.0.1:7002 | replica | 6,636 | 0 | 2 | 66.4% |") {
		t.Errorf("markdown lacks the node table:\n%s", md)
	}
	if !strings.Contains(html, `data-m="share" data-v="0.6636">66.4%</td>`) {
		t.Error("HTML lacks the node share cell")
	}
	for _, w := range []string{",node_127.0.0.1:7001_reads,3364,count", ",node_127.0.0.1:7002_share,0.6636,fraction"} {
		if !strings.Contains(csvOut, w) {
			t.Errorf("CSV lacks %q", w)
		}
	}
}
