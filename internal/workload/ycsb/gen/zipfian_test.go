package gen

import (
	"math"
	"slices"
	"testing"

	"github.com/storebench/storebench/internal/workload/keydist"
)

// Java's ZipfianGenerator.zetastatic(n, 0.99), printed by OpenJDK 17.0.15
// (Double.doubleToLongBits as hex). Go's math.Pow and HotSpot's Math.pow
// differ in the last bits for some terms, so the sums agree to ~1e-15, not
// always bit for bit (the package doc says so); small n agree exactly.
func TestZetaMatchesJava(t *testing.T) {
	for _, c := range []struct {
		n    int64
		bits uint64
	}{
		{2, 0x3ff80e3eb6202786},
		{1000, 0x401eea72b6523523},
		{100000, 0x40298e825397c77a},
		{1000000, 0x402ec8a087a85a53},
	} {
		got, want := Zeta(0, c.n, ZipfianConstant, 0), math.Float64frombits(c.bits)
		if math.Abs(got-want) > 1e-14*want {
			t.Errorf("zeta(%d) = %v, Java's %v", c.n, got, want)
		}
		if c.n <= 1000 && got != want {
			t.Errorf("zeta(%d) = %x, Java's bits %x", c.n, math.Float64bits(got), c.bits)
		}
	}
	// The incremental sum YCSB uses when the item count grows: Java's
	// zetastatic(1000, 1500, 0.99, zetastatic(1000)) is 0x40205407c634c66a,
	// and the same bits as the sum computed whole.
	inc := Zeta(1000, 1500, ZipfianConstant, Zeta(0, 1000, ZipfianConstant, 0))
	if whole := Zeta(0, 1500, ZipfianConstant, 0); inc != whole || math.Float64bits(inc) != 0x40205407c634c66a {
		t.Errorf("incremental zeta(1500) = %x, whole %x, Java's 40205407c634c66a", math.Float64bits(inc), math.Float64bits(whole))
	}
}

// ZETAN is YCSB's zeta(10^10, 0.99), too long a sum to redo in a test: an
// exact sum to 10^6 plus the Euler–Maclaurin tail to 10^10 must land on it
// (to 1e-6: Java's 10^10 rounded additions drift that far at most).
func TestZetanIsZetaOfItemCount(t *testing.T) {
	const m, theta = 1_000_000, UsedZipfianConstant
	n := float64(ItemCount)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	tail := (math.Pow(n, 1-theta)-math.Pow(m, 1-theta))/(1-theta) + (f(n)-f(m))/2 + (df(n)-df(m))/12
	if got := Zeta(0, m, theta, 0) + tail; math.Abs(got-Zetan) > 1e-6*Zetan {
		t.Errorf("zeta(10^10) ≈ %v, YCSB's ZETAN %v", got, Zetan)
	}
}

// grayRankMass is the probability that YCSB's ZipfianGenerator over
// items returns rank k (of itemcount == items): ranks 0 and 1 exactly as
// the pmf, the rest from the closed form's inverse, P(rank < k) =
// 1 - (1 - (k/items)^(1-θ))/η. This is what YCSB draws; Gray's closed form
// puts a few percent more mass on the head than the zipfian pmf
// (k+1)^-θ/zeta(items) does (pmfRankMass).
func grayRankMass(z *Zipfian) func(k int64) float64 {
	cdf := func(k int64) float64 {
		return 1 - (1-math.Pow(float64(k)/float64(z.items), 1-z.theta))/z.eta
	}
	return func(k int64) float64 {
		switch k {
		case 0:
			return 1 / z.zetan
		case 1:
			return math.Pow(0.5, z.theta) / z.zetan
		}
		return cdf(k+1) - cdf(k)
	}
}

func pmfRankMass(z *Zipfian) func(k int64) float64 {
	return func(k int64) float64 { return math.Pow(float64(k+1), -z.theta) / z.zetan }
}

// topMass is the sum of the top fractions of masses, sorted in place.
func topMass(masses []float64, top int) float64 {
	slices.SortFunc(masses, func(a, b float64) int { return -compare(a, b) })
	var sum float64
	for _, m := range masses[:top] {
		sum += m
	}
	return sum
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scrambledKeyMass is each key's analytic share under a ScrambledZipfian
// over n keys: the first heads ranks folded exactly (FNV-64 mod n), the
// rest of the mass, spread over ~10^10 ranks, evenly: a key among the
// top 10% holds over 1e-4 of the mass, a tail rank under 1e-7.
func scrambledKeyMass(n int64, rankMass func(int64) float64) []float64 {
	const heads = 300_000
	keys := make([]float64, n)
	var head float64
	for r := int64(0); r < heads; r++ {
		m := rankMass(r)
		head += m
		keys[FNVHash64(r)%n] += m
	}
	for i := range keys {
		keys[i] += (1 - head) / float64(n)
	}
	return keys
}

// TestScrambledZipfianMass: over 1M draws, the most frequent 1% and 10% of
// keys take within 1% of the analytic mass of YCSB's generator, and the
// most frequent key is the one rank 0 hashes to.
func TestScrambledZipfianMass(t *testing.T) {
	const n, draws = 10_000, 1_000_000
	s := NewScrambledZipfian(0, n-1)
	r := keydist.NewRand(1, 2)
	counts := make([]float64, n)
	for range draws {
		k := s.Next(&r)
		if k < 0 || k >= n {
			t.Fatalf("drew %d, out of [0, %d)", k, n)
		}
		counts[k]++
	}
	hottest := int64(slices.Index(counts, slices.Max(counts)))
	if want := FNVHash64(0) % n; hottest != want {
		t.Errorf("most frequent key %d, want %d (fnvhash64(0) %% %d, rank 0's key)", hottest, want, n)
	}
	gray := scrambledKeyMass(n, grayRankMass(&s.gen))
	pmf := scrambledKeyMass(n, pmfRankMass(&s.gen))
	for _, top := range []int{n / 100, n / 10} {
		got, want := topMass(counts, top)/draws, topMass(gray, top)
		t.Logf("top %d keys: %.4f of draws, YCSB's generator %.4f, zipfian pmf %.4f", top, got, want, topMass(pmf, top))
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("top %d of %d keys took %.4f of draws, analytic %.4f: more than 1%% apart", top, n, got, want)
		}
	}
}

// TestLatestFavoursNewest: the newest acknowledged key is the most
// frequent, the newest 1% take the analytic mass, and as inserts are
// acknowledged the draws follow the new newest key.
func TestLatestFavoursNewest(t *testing.T) {
	const records, draws = 100_001, 1_000_000
	inserts := NewAckCounter(records) // Last: 100000, CoreWorkload's start
	latest := NewSkewedLatest(inserts)
	r := keydist.NewRand(3, 4)
	last := inserts.Last()
	counts := make([]float64, last+1)
	for range draws {
		k := latest.Next(&r)
		if k < 0 || k > last {
			t.Fatalf("drew %d, out of [0, %d]", k, last)
		}
		counts[last-k]++ // by age: 0 is the newest
	}
	if newest := slices.Index(counts, slices.Max(counts)); newest != 0 {
		t.Errorf("most frequent key is %d inserts old, want the newest", newest)
	}
	top := int64(len(counts) / 100)
	var got, want, pmf float64
	gray, exact := grayRankMass(&latest.zipfian), pmfRankMass(&latest.zipfian)
	for age := range top {
		got += counts[age] / draws
		want += gray(age)
		pmf += exact(age)
	}
	t.Logf("newest %d keys: %.4f of draws, YCSB's generator %.4f, zipfian pmf %.4f", top, got, want, pmf)
	if math.Abs(got-want) > 0.01*want {
		t.Errorf("newest %d keys took %.4f of draws, analytic %.4f: more than 1%% apart", top, got, want)
	}

	// Insert 500 more: the newest is now record 100500.
	for range 500 {
		if err := inserts.Acknowledge(inserts.Next()); err != nil {
			t.Fatal(err)
		}
	}
	if inserts.Last() != last+500 {
		t.Fatalf("Last after 500 inserts = %d, want %d", inserts.Last(), last+500)
	}
	newest := 0
	for range 100_000 {
		k := latest.Next(&r)
		if k > last+500 {
			t.Fatalf("drew %d, above the last acknowledged insert %d", k, last+500)
		}
		if k == last+500 {
			newest++
		}
	}
	// The newest key's share is 1/zeta(items) with zeta grown to the new
	// count, as YCSB's incremental recomputation gives.
	wantZeta := Zeta(0, last+500, ZipfianConstant, 0)
	if latest.zipfian.zetan != wantZeta || latest.zipfian.countForZeta != last+500 {
		t.Errorf("zeta after growth %v over %d items, want %v over %d", latest.zipfian.zetan, latest.zipfian.countForZeta, wantZeta, last+500)
	}
	if got, want := float64(newest)/100_000, 1/wantZeta; math.Abs(got-want) > 0.05*want {
		t.Errorf("newest key after the inserts took %.4f of draws, want 1/zeta = %.4f", got, want)
	}
}

func TestUniformLongRange(t *testing.T) {
	u := NewUniformLong(1, 100) // workload E's scan length
	r := keydist.NewRand(5, 6)
	var seen [101]int
	for range 100_000 {
		v := u.Next(&r)
		if v < 1 || v > 100 {
			t.Fatalf("drew %d, out of [1, 100]", v)
		}
		seen[v]++
	}
	for v := 1; v <= 100; v++ {
		if seen[v] < 800 || seen[v] > 1200 { // mean 1000, sd ~31
			t.Errorf("value %d drawn %d times of 100000, want about 1000", v, seen[v])
		}
	}
}

func TestZipfianDeterministic(t *testing.T) {
	z := NewZipfian(0, 999, ZipfianConstant)
	a, b := z, z
	ra, rb, rc := keydist.NewRand(7, 1), keydist.NewRand(7, 1), keydist.NewRand(8, 1)
	same := 0
	for range 10_000 {
		x, y := a.Next(&ra), b.Next(&rb)
		if x != y {
			t.Fatalf("same seed drew %d and %d", x, y)
		}
		if x == z.Next(&rc) {
			same++
		}
	}
	if same > 5000 {
		t.Errorf("seeds 7 and 8 agree on %d of 10000 draws", same)
	}
}
