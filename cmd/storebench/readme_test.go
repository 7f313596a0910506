package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/suites"
)

// TestReadmeScenarioExample: the scenario file docs/scenarios.md shows
// parses and validates against the real stores, so the example a newcomer
// copies works.
func TestReadmeScenarioExample(t *testing.T) {
	_, block, ok := strings.Cut(repoFile(t, "docs/scenarios.md"), "```yaml\n")
	if !ok {
		t.Fatal("docs/scenarios.md has no ```yaml block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/scenarios.md's scenario example is not closed")
	}
	s, err := scenario.Parse("docs/scenarios.md example", strings.NewReader(block))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyQuick(all.Types()); err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if _, err := s.Resolve(kinds.All(), all.Types(), false); err != nil {
		t.Fatal(err)
	}
	if len(s.Targets) < 5 || len(s.Workloads) < 5 {
		t.Errorf("the example has %d targets and %d workloads: was it cut short?", len(s.Targets), len(s.Workloads))
	}
}

// repoFile reads a file of the repository, by its path from the root.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeMaxLines is issue 29's bound: the README is the first screen and a
// map; the reference lives in docs/.
const readmeMaxLines = 300

// mdLink matches a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestReadmeLinksDocs: the README stays short, links every page of docs/,
// and no relative link in the README or docs/ points at a missing file or
// at a heading the file does not have.
func TestReadmeLinksDocs(t *testing.T) {
	readme := repoFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the reference into a docs/ page", n, readmeMaxLines)
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 2 {
		t.Fatalf("docs/*.md: %v, %v", pages, err)
	}
	linked := map[string]bool{}
	for _, m := range mdLink.FindAllStringSubmatch(readme, -1) {
		file, _, _ := strings.Cut(m[1], "#")
		linked[filepath.Clean(file)] = true
	}
	for _, p := range pages {
		rel := "docs/" + filepath.Base(p)
		if !linked[rel] {
			t.Errorf("README.md does not link %s", rel)
		}
	}
	for _, f := range append([]string{"../../README.md"}, pages...) {
		checkLinks(t, f)
	}
}

// checkLinks fails for each relative link of the Markdown file f whose file
// is missing, or whose #anchor is not a heading of that file.
func checkLinks(t *testing.T, f string) {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := f
		if file != "" {
			path = filepath.Join(filepath.Dir(f), file)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s links %s: %v", filepath.Base(f), target, err)
			continue
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(path, ".md") {
			t.Errorf("%s links %s: an anchor into a file that is not Markdown", filepath.Base(f), target)
			continue
		}
		h, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !anchors(string(h))[anchor] {
			t.Errorf("%s links %s: %s has no heading with that anchor", filepath.Base(f), target, file)
		}
	}
}

// anchors returns the anchors GitHub makes of a Markdown file's headings:
// lower case, punctuation but '-' and '_' dropped, spaces as '-'.
func anchors(md string) map[string]bool {
	a := map[string]bool{}
	fence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var s strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				s.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				s.WriteRune(r)
			}
		}
		a[s.String()] = true
	}
	return a
}

// TestReadmeSuites: the README's Suites section has one `storebench run
// NAME` line per built-in suite, and names no suite that does not exist.
func TestReadmeSuites(t *testing.T) {
	_, section, ok := strings.Cut(repoFile(t, "README.md"), "\n## Suites\n")
	if !ok {
		t.Fatal(`README.md has no "## Suites" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^storebench run ([a-z0-9-]+)`).FindAllStringSubmatch(section, -1) {
		listed[m[1]]++
	}
	for _, name := range suites.Names() {
		if listed[name] != 1 {
			t.Errorf("README.md's Suites section lists suite %s %d times, want once", name, listed[name])
		}
		delete(listed, name)
	}
	var extra []string
	for name := range listed {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("README.md's Suites section lists %v, which are not built-in suites", extra)
	}
}
