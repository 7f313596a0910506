package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/workload/all"
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
	if _, err := s.Resolve(stores(), all.Types(), false); err != nil {
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
