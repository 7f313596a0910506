package gen

import (
	"math"

	"github.com/storebench/storebench/internal/workload/keydist"
)

// ZipfianConstant is ZipfianGenerator.ZIPFIAN_CONSTANT, the θ of every
// zipfian CoreWorkload builds (it has no property to change it).
const ZipfianConstant = 0.99

// ScrambledZipfianGenerator's constants: it draws from a zipfian over
// ItemCount+1 items whatever its own range, with zeta(ItemCount, 0.99)
// precomputed as Zetan (its main method computes it), then folds the item
// onto its range with FNVHash64 modulo the range's size.
const (
	ItemCount           = int64(10000000000)
	Zetan               = 26.46902820178302
	UsedZipfianConstant = 0.99
)

// Zeta is ZipfianGenerator.zetastatic(st, n, theta, initialsum): the sum
// continued from initialsum, the sum of the first st terms, to n terms,
// Σ 1/(i+1)^theta for i in [st, n). Terms are added one at a time in
// order, so continuing a sum gives the same bits as computing it whole.
func Zeta(st, n int64, theta, initialsum float64) float64 {
	sum := initialsum
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// Zipfian is ZipfianGenerator: items min..max, min the most popular, drawn
// with Gray et al.'s closed form ("Quickly Generating Billion-Record
// Synthetic Databases", SIGMOD 1994). It is a value with no pointers: set
// one up (the zeta sum is O(items)) and copy it to each worker, which then
// owns its copy; a copy grows its zeta on its own, as NextLong is asked for
// more items.
type Zipfian struct {
	items, base                          int64
	theta, alpha, zetan, eta, zeta2theta float64
	countForZeta                         int64
	// secondBound is 1 + 0.5^θ, which nextLong computes on every draw:
	// the same bits, computed once.
	secondBound float64
}

// NewZipfian is new ZipfianGenerator(min, max, theta): it sums zeta over
// the max-min+1 items, which takes about 20 ms per million.
func NewZipfian(min, max int64, theta float64) Zipfian {
	return NewZipfianZeta(min, max, theta, Zeta(0, max-min+1, theta, 0))
}

// NewZipfianZeta is new ZipfianGenerator(min, max, theta, zetan), with
// zetan the zeta of max-min+1 items already known.
func NewZipfianZeta(min, max int64, theta, zetan float64) Zipfian {
	z := Zipfian{items: max - min + 1, base: min, theta: theta, zetan: zetan}
	z.zeta2theta = Zeta(0, 2, theta, 0)
	z.alpha = 1.0 / (1.0 - theta)
	z.secondBound = 1.0 + math.Pow(0.5, theta)
	z.countForZeta = z.items
	z.eta = z.etaFor()
	// Java's constructor ends with a nextValue() whose value it drops:
	// it only moves the random stream, which this port does not share.
	return z
}

// etaFor is η as ZipfianGenerator computes it, also when the item count
// has grown: with the items it was built for, not the current count (as
// YCSB does; only zetan follows the count).
func (z *Zipfian) etaFor() float64 {
	return (1 - math.Pow(2.0/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// Items is the item count the generator was built for.
func (z *Zipfian) Items() int64 { return z.items }

// Next is nextValue(): NextLong over the items it was built for.
func (z *Zipfian) Next(r *keydist.Rand) int64 { return z.NextLong(r, z.items) }

// NextLong is nextLong(itemcount). When itemcount has grown past the count
// zeta was summed for, the sum is continued incrementally and η
// recomputed, as YCSB does; when it has shrunk nothing is recomputed
// (YCSB's allowitemcountdecrease is false and nothing sets it).
func (z *Zipfian) NextLong(r *keydist.Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = Zeta(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = z.etaFor()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1.0 {
		return z.base
	}
	if uz < z.secondBound {
		return z.base + 1
	}
	return z.base + javaLong(float64(itemcount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// ScrambledZipfian is ScrambledZipfianGenerator(min, max) with θ 0.99:
// a zipfian over ItemCount+1 items (zeta precomputed as Zetan), each item
// mapped to min + FNVHash64(item) % (max-min+1). The mapping is a hash,
// not a permutation: several items can land on one key, and the keys'
// shares are the zipfian's folded, as YCSB's are.
type ScrambledZipfian struct {
	min, itemcount int64
	gen            Zipfian
}

// NewScrambledZipfian sets one up; it costs O(1) (the zeta is a constant).
func NewScrambledZipfian(min, max int64) ScrambledZipfian {
	return ScrambledZipfian{min: min, itemcount: max - min + 1, gen: NewZipfianZeta(0, ItemCount, UsedZipfianConstant, Zetan)}
}

// Next is nextValue().
func (s *ScrambledZipfian) Next(r *keydist.Rand) int64 {
	return s.min + FNVHash64(s.gen.Next(r))%s.itemcount
}

// SkewedLatest is SkewedLatestGenerator over an AckCounter: a zipfian
// over the count of acknowledged items, counted back from the newest one,
// so the newest item is the most popular. Like Zipfian, set one up and
// copy it to each worker.
type SkewedLatest struct {
	basis   *AckCounter
	zipfian Zipfian
}

// NewSkewedLatest is new SkewedLatestGenerator(basis): a ZipfianGenerator
// of basis.lastValue() items (zeta summed over them: O(items)).
func NewSkewedLatest(basis *AckCounter) SkewedLatest {
	return SkewedLatest{basis: basis, zipfian: NewZipfian(0, basis.Last()-1, ZipfianConstant)}
}

// Next is nextValue(): the last acknowledged value minus a zipfian draw
// over that many items.
func (s *SkewedLatest) Next(r *keydist.Rand) int64 {
	max := s.basis.Last()
	return max - s.zipfian.NextLong(r, max)
}

// UniformLong is UniformLongGenerator(lb, ub): Math.abs(nextLong()) %
// (ub-lb+1) + lb, so values in [lb, ub] (and, as in YCSB, a negative one
// once in 2^64 draws, where Math.abs leaves Long.MIN_VALUE negative).
type UniformLong struct{ lb, interval int64 }

// NewUniformLong sets one up over [lb, ub]; ub must not be below lb.
func NewUniformLong(lb, ub int64) UniformLong { return UniformLong{lb: lb, interval: ub - lb + 1} }

// Next is nextValue().
func (u UniformLong) Next(r *keydist.Rand) int64 {
	v := int64(r.Uint64())
	if v < 0 {
		v = -v
	}
	return v%u.interval + u.lb
}
