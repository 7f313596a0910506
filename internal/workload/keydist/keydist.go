// Package keydist draws key indexes from a keyspace [0, n): uniform,
// zipfian (YCSB's skew) or sequential. It is a package of its own, not part
// of a workload, because several workloads draw keys (mix, throughput) and
// the zipfian's arithmetic deserves its own tests.
//
// A Space is set up once per cell (the zipfian's zeta sum costs O(n), ~10 ms
// per million keys) and shared read-only by the workers; each worker draws
// from its own Gen, seeded from the run's seed and a stream number: no lock,
// no allocation and O(1) per draw.
package keydist

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/storebench/storebench/internal/workload"
)

// Dist is a key distribution's name.
type Dist string

// The distributions.
const (
	// Uniform draws every key with the same probability.
	Uniform Dist = "uniform"
	// Zipfian draws key ranks with probability ∝ 1/rank^0.99 (YCSB's
	// constant), with the ranks scattered over the keyspace so the hot keys
	// are not the lowest indexes.
	Zipfian Dist = "zipfian"
	// Sequential walks the keyspace in order: worker w of W takes w, w+W,
	// w+2W, … and wraps around, so together the workers walk it once per
	// pass, each on its own stride. It draws no random numbers.
	Sequential Dist = "sequential"
)

// Dists lists the valid distributions.
var Dists = []Dist{Uniform, Zipfian, Sequential}

// ZipfianConstant is YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT.
const ZipfianConstant = 0.99

// Parse validates a distribution's name.
func Parse(s string) (Dist, error) {
	for _, d := range Dists {
		if string(d) == s {
			return d, nil
		}
	}
	return "", fmt.Errorf("unknown key distribution %q (valid: uniform, zipfian, sequential)", s)
}

// Space is one keyspace with one distribution, set up once and read by
// every worker's Gen.
type Space struct {
	dist Dist
	n    uint64
	z    zipf
}

// zipf holds YCSB's ZipfianGenerator constants (Gray et al., "Quickly
// generating billion-record synthetic databases", SIGMOD 1994).
type zipf struct {
	theta, alpha, zetan, eta, half float64
	perm                           feistel
}

// MinTheta and MaxTheta bound a zipfian's θ: Gray et al.'s closed-form
// inverse divides by 1 − θ, so θ = 1 and above cannot be drawn this way,
// and θ near 0 is a uniform in all but name.
const (
	MinTheta = 0.01
	MaxTheta = 0.999
)

// CheckTheta refuses a zipfian θ outside [MinTheta, MaxTheta].
func CheckTheta(theta float64) error {
	if !(theta >= MinTheta && theta <= MaxTheta) { // NaN fails too
		return fmt.Errorf("zipfian theta %v: want %g to %g (the generator's closed form divides by 1 - theta; YCSB's is %g)", theta, MinTheta, MaxTheta, ZipfianConstant)
	}
	return nil
}

// New sets up a distribution over [0, n); a zipfian has YCSB's θ, 0.99.
func New(d Dist, n int64) (*Space, error) { return NewTheta(d, n, ZipfianConstant) }

// NewTheta sets up a distribution over [0, n) whose zipfian, if d is one,
// draws rank r with probability ∝ 1/(r+1)^theta. Other distributions
// ignore theta.
func NewTheta(d Dist, n int64, theta float64) (*Space, error) {
	if _, err := Parse(string(d)); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("keyspace must be positive, got %d", n)
	}
	s := &Space{dist: d, n: uint64(n)}
	if d == Zipfian {
		if err := CheckTheta(theta); err != nil {
			return nil, err
		}
		zetan := Zeta(n, theta)
		s.z = zipf{
			theta: theta,
			alpha: 1 / (1 - theta),
			zetan: zetan,
			eta:   (1 - math.Pow(2/float64(n), 1-theta)) / (1 - Zeta(2, theta)/zetan),
			half:  1 + math.Pow(0.5, theta),
			perm:  newFeistel(uint64(n)),
		}
	}
	return s, nil
}

// Theta is the zipfian's θ; 0 for the other distributions.
func (s *Space) Theta() float64 { return s.z.theta }

// Dist returns the distribution's name.
func (s *Space) Dist() Dist { return s.dist }

// Zeta is the generalized harmonic number Σ_{i=1..n} 1/i^theta: the
// zipfian's normalizing sum, and, as Zeta(m)/Zeta(n), the share of draws
// that fall on the m hottest of n keys.
func Zeta(n int64, theta float64) float64 {
	var sum float64
	for i := int64(1); i <= n; i++ {
		sum += math.Pow(float64(i), -theta)
	}
	return sum
}

// Gen draws one worker's keys. It is a value, owned by one goroutine.
type Gen struct {
	s    *Space
	rng  Rand
	pos  uint64 // sequential: next index
	step uint64 // sequential: the number of workers
}

// Gen returns the generator of one worker: stream must differ between the
// workers of a run (and between its phases, where a run has several), so
// their draws are independent; worker of workers places a sequential walk.
func (s *Space) Gen(seed, stream uint64, worker, workers int) Gen {
	g := Gen{s: s, rng: NewRand(seed, stream), step: 1}
	if workers > 0 {
		g.pos, g.step = uint64(worker)%s.n, uint64(workers)
	}
	return g
}

// Rand is a splitmix64 generator: one uint64 of state, no lock, no
// allocation. A worker may keep one beside its Gen for its other draws.
type Rand struct{ state uint64 }

// NewRand seeds a generator from the run's seed and a stream number
// (throughput's key sequences have always been seeded this way).
func NewRand(seed, stream uint64) Rand {
	return Rand{workload.Mix(seed ^ workload.Mix(stream+0x632be59bd9b4e019))}
}

// Uint64 returns the next random number.
func (r *Rand) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return workload.Mix(r.state)
}

// Float64 returns a number uniform in [0, 1), from 53 random bits.
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Next draws the next key index, in [0, n).
func (g *Gen) Next() int64 {
	s := g.s
	switch s.dist {
	case Zipfian:
		return int64(s.z.perm.apply(s.z.rank(g.rng.Float64())))
	case Sequential:
		i := g.pos
		g.pos += g.step
		if g.pos >= s.n {
			g.pos %= s.n
		}
		return int64(i)
	}
	// Lemire's multiply-shift instead of a modulo: no division, no bias
	// worth a benchmark's notice (< n/2^64).
	hi, _ := bits.Mul64(g.rng.Uint64(), s.n)
	return int64(hi)
}

// rank is YCSB's ZipfianGenerator.nextLong: rank 0 is the hottest. The
// first two ranks are exact; the rest follow Gray et al.'s closed-form
// approximation of the inverse CDF.
func (z *zipf) rank(u float64) uint64 {
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	r := uint64(float64(z.perm.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, z.perm.n-1) // u close to 1 can round to n
}

// feistel is a keyed permutation of [0, n): a 4-round balanced Feistel
// network on the smallest even number of bits that holds n, walking the
// cycle until the value falls inside [0, n) (on average fewer than 4 steps,
// as the domain is < 4n).
//
// YCSB's ScrambledZipfianGenerator scatters ranks with FNV-64 modulo n,
// which is not a permutation: two ranks can land on one key, so the keys'
// shares are no longer the zipfian's. A permutation keeps each key's
// probability exactly its rank's, which is what the tests check.
type feistel struct {
	n    uint64
	half uint   // bits per half
	mask uint64 // (1 << half) - 1
}

func newFeistel(n uint64) feistel {
	b := uint(bits.Len64(n - 1))
	b += b & 1
	half := max(b/2, 1)
	return feistel{n: n, half: half, mask: 1<<half - 1}
}

func (f feistel) apply(x uint64) uint64 {
	for {
		l, r := x>>f.half, x&f.mask
		for round := range uint64(4) {
			l, r = r, l^(workload.Mix(r+round*0x9e3779b97f4a7c15)&f.mask)
		}
		x = l<<f.half | r
		if x < f.n {
			return x
		}
	}
}
