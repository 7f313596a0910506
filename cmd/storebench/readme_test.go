package main

import (
	"os"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/workload/all"
)

// TestReadmeScenarioExample: the scenario file README.md shows under
// "Scenario files" parses and validates against the real stores, so the
// example a newcomer copies works.
func TestReadmeScenarioExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Scenario files")
	if !ok {
		t.Fatal(`README.md has no "## Scenario files" section`)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("README.md's Scenario files section has no ```yaml block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md's scenario example is not closed")
	}
	s, err := scenario.Parse("README.md example", strings.NewReader(block))
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
