package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// TestAbsentTableWritesNothing: a section's optional table that no cell
// filled (nil, or orNil of a table without rows) writes nothing in any
// format, its title and lede included; a filled one is titled.
func TestAbsentTableWritesNothing(t *testing.T) {
	empty := newTable("t", "caption", true, column{head: "cell", left: true})
	for name, tb := range map[string]*table{"nil": nil, "no rows": empty.orNil()} {
		var text bytes.Buffer
		tb.textUnder(&text, "title")
		var md strings.Builder
		subsectionTable(mdOut{&md}, "Title", "lede", tb)
		if text.Len() != 0 || md.Len() != 0 {
			t.Errorf("%s: the absent table wrote %q to the terminal and %q to Markdown", name, text.String(), md.String())
		}
	}
	empty.add(textCell("row"))
	var text bytes.Buffer
	empty.orNil().textUnder(&text, "title")
	if !strings.HasPrefix(text.String(), "\ntitle\n") || !strings.Contains(text.String(), "row") {
		t.Errorf("terminal: %q, want a blank line, the title and the table", text.String())
	}
	var md strings.Builder
	subsectionTable(mdOut{&md}, "Title", "lede", empty)
	if !strings.HasPrefix(md.String(), "\n### Title\n\nlede\n\ncaption:") {
		t.Errorf("markdown: %q, want the heading, the lede and the table", md.String())
	}
}

// TestPhasesInOrder: every phase of the cells, a cell's repeats together,
// and a loop may break off.
func TestPhasesInOrder(t *testing.T) {
	phases := func(names ...string) []metrics.Phase {
		var ps []metrics.Phase
		for _, n := range names {
			ps = append(ps, metrics.Phase{Name: n})
		}
		return ps
	}
	r := &result.Result{Cells: []result.Cell{
		{ID: "a", Target: "a", Repeat: 1, Phases: phases("write", "read")},
		{ID: "b", Target: "b", Repeat: 1, Phases: phases("write")},
		{ID: "a", Target: "a", Repeat: 2, Phases: phases("write", "read")},
	}}
	var got []string
	for c, p := range phasesInOrder(r) {
		got = append(got, c.ID+"#"+string(rune('0'+c.Repeat))+" "+p.Name)
	}
	if want := "a#1 write, a#1 read, a#2 write, a#2 read, b#1 write"; strings.Join(got, ", ") != want {
		t.Errorf("phases %q, want %q", strings.Join(got, ", "), want)
	}
	// An iterator that went on after the loop's break would make the
	// runtime panic here.
	for range phasesInOrder(r) {
		break
	}
}
