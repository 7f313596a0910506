package run

import (
	"slices"
	"testing"
)

// TestCellsTellTheirWorkloadAndLoop: what an observer is told of a planned
// cell names its workload type (not the entry's name) and whether its load
// has an arrival rate.
func TestCellsTellTheirWorkloadAndLoop(t *testing.T) {
	p := plan(t, `name: t
targets: [memory]
workloads:
  - {type: throughput, name: paced, load: {rate: 1000, duration: 1s}}
  - {type: mix, load: {duration: 1s}}
  - {type: kv, keys: [100]}
`, Options{})
	want := []CellInfo{
		{Label: "memory/paced", Target: "memory", Workload: "throughput", Weight: 1, OpenLoop: true},
		{Label: "memory/mix/key_dist=uniform/read_ratio=0.9", Target: "memory", Workload: "mix", Weight: 1},
		{Label: "memory/kv/keys=100", Target: "memory", Workload: "kv", Weight: 100},
	}
	if got := p.Cells(); !slices.Equal(got, want) {
		t.Errorf("Cells() = %+v\nwant %+v", got, want)
	}
}
