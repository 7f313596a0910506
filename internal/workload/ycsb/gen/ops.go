package gen

import "github.com/storebench/storebench/internal/workload/keydist"

// Op is one of CoreWorkload's operations.
type Op uint8

// The operations, in the order CoreWorkload adds them to its chooser.
const (
	Read Op = iota
	Update
	Insert
	Scan
	ReadModifyWrite
)

// NumOps is the number of operations: Op(0) to Op(NumOps-1), in
// CoreWorkload's order.
const NumOps = 5

// String is the operation's name as YCSB reports it.
func (o Op) String() string {
	switch o {
	case Read:
		return "READ"
	case Update:
		return "UPDATE"
	case Insert:
		return "INSERT"
	case Scan:
		return "SCAN"
	case ReadModifyWrite:
		return "READ-MODIFY-WRITE"
	}
	return "UNKNOWN"
}

// OpChooser is the DiscreteGenerator CoreWorkload.createOperationGenerator
// builds: the operations whose proportion is above zero, in that order,
// each drawn with its weight over the weights' sum. It is read-only once
// built; the workers share it and draw with their own Rand.
type OpChooser struct {
	n       int
	ops     [NumOps]Op
	weights [NumOps]float64 // weight / sum, as nextValue computes it
}

// NewOpChooser builds the chooser of p's proportions. p must have passed
// Validate (a positive sum).
func NewOpChooser(p *Properties) OpChooser {
	var c OpChooser
	var raw [NumOps]float64
	for op := range Op(NumOps) {
		if w := p.Proportion(op); w > 0 {
			c.ops[c.n], raw[c.n] = op, w
			c.n++
		}
	}
	// DiscreteGenerator sums the weights in the order they were added
	// and divides each by the sum on every draw; once here is the same
	// arithmetic.
	var sum float64
	for _, w := range raw[:c.n] {
		sum += w
	}
	for i, w := range raw[:c.n] {
		c.weights[i] = w / sum
	}
	return c
}

// Next is nextValue(): a uniform u in [0, 1) walks the weights. Where
// rounding leaves u past the last weight, Java throws an AssertionError;
// this returns the last operation.
func (c *OpChooser) Next(r *keydist.Rand) Op {
	val := r.Float64()
	for i, pw := range c.weights[:c.n] {
		if val < pw {
			return c.ops[i]
		}
		val -= pw
	}
	return c.ops[c.n-1]
}
