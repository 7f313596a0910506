package gen

import (
	"math"
	"testing"
)

// The core workloads' proportions, as workloads/workloada … f set them.
var coreMix = map[string][NumOps]float64{
	"a": {Read: 0.5, Update: 0.5},
	"b": {Read: 0.95, Update: 0.05},
	"c": {Read: 1},
	"d": {Read: 0.95, Insert: 0.05},
	"e": {Scan: 0.95, Insert: 0.05},
	"f": {Read: 0.5, ReadModifyWrite: 0.5},
}

func TestOperationMix(t *testing.T) {
	const ops = 100_000
	for _, name := range StandardNames() {
		w := standardCore(t, name).Worker(42, 1)
		var counts [NumOps]float64
		for range ops {
			counts[w.NextOp()]++
		}
		for op := range Op(NumOps) {
			got, want := counts[op]/ops, coreMix[name][op]
			if math.Abs(got-want) > 0.02 {
				t.Errorf("workload %s: %s %.4f of %d ops, YCSB's %.2f", name, op, got, ops, want)
			}
			if want == 0 && got != 0 {
				t.Errorf("workload %s: %s drawn %.0f times, its proportion is 0", name, op, counts[op])
			}
		}
	}
}

// Proportions are weights: DiscreteGenerator divides by their sum.
func TestOpChooserNormalizes(t *testing.T) {
	p := Defaults()
	p.ReadProportion, p.UpdateProportion, p.ScanProportion = 3, 0, 1
	c := NewOpChooser(&p)
	w, err := NewCore(p)
	if err != nil {
		t.Fatal(err)
	}
	worker := w.Worker(1, 1)
	var reads, scans float64
	for range 100_000 {
		switch worker.NextOp() {
		case Read:
			reads++
		case Scan:
			scans++
		default:
			t.Fatal("drew an operation of proportion 0")
		}
	}
	if got := reads / 100_000; math.Abs(got-0.75) > 0.02 {
		t.Errorf("reads %.3f of ops with weights 3:1, want 0.75", got)
	}
	if c.n != 2 || c.weights[0] != 0.75 || c.weights[1] != 0.25 {
		t.Errorf("chooser %+v, want READ 0.75, SCAN 0.25", c)
	}
}
