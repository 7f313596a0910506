package run

import (
	"testing"

	"github.com/storebench/storebench/internal/scenario"
)

// Every workload the scenarios accept has a planner.
func TestEveryWorkloadIsPlanned(t *testing.T) {
	for _, w := range scenario.Workloads {
		if planners[w] == nil {
			t.Errorf("workload %s has no planner", w)
		}
	}
}
