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
	var text, md, html, csvOut bytes.Buffer
	Text(&text, r)
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csvOut, r); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(text.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	label, phase := r.Cells[0].Label(), r.Cells[0].Phases[0].Name
	want := label + " " + phase + " 127.0.0.1:7001 primary 3,364 10 0 33.6%"
	if !strings.Contains(strings.Join(rows, "\n"), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	if !strings.Contains(md.String(), "## Ops per node") || !strings.Contains(md.String(), "| 127.0.0.1:7002 | replica | 6,636 | 0 | 2 | 66.4% |") {
		t.Errorf("markdown lacks the node table:\n%s", md.String())
	}
	if !strings.Contains(html.String(), `data-m="share" data-v="0.6636">66.4%</td>`) {
		t.Error("HTML lacks the node share cell")
	}
	for _, w := range []string{",node_127.0.0.1:7001_reads,3364,count", ",node_127.0.0.1:7002_share,0.6636,fraction"} {
		if !strings.Contains(csvOut.String(), w) {
			t.Errorf("CSV lacks %q", w)
		}
	}
}
