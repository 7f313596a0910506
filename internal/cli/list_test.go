package cli

import (
	"testing"

	"github.com/storebench/storebench/internal/scenario"
)

// Every workload the scenarios accept has a line in `list`.
func TestEveryWorkloadIsListed(t *testing.T) {
	for _, w := range scenario.Workloads {
		if workloadHelp[w] == "" {
			t.Errorf("workload %s has no help line in list", w)
		}
	}
}
