package report

import (
	"bytes"
	"strings"
	"testing"
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
