package cli

import (
	"testing"

	"github.com/storebench/storebench/internal/scenario"
)

// Every workload the scenarios accept has a planner and a line in `list`.
func TestEveryWorkloadIsPlannedAndListed(t *testing.T) {
	for _, w := range scenario.Workloads {
		if planners[w] == nil {
			t.Errorf("workload %s has no planner", w)
		}
		if workloadHelp[w] == "" {
			t.Errorf("workload %s has no help line in list", w)
		}
	}
}
