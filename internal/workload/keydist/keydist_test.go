package keydist

import (
	"math"
	"slices"
	"testing"
)

func space(t testing.TB, d Dist, n int64) *Space {
	t.Helper()
	s, err := New(d, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDeterministicAndInRange(t *testing.T) {
	for _, d := range Dists {
		for _, n := range []int64{1, 2, 3, 7, 1000, 100_003} {
			s := space(t, d, n)
			a, b := s.Gen(42, 7, 3, 8), s.Gen(42, 7, 3, 8)
			other := s.Gen(43, 7, 3, 8)
			same := 0
			for range 20_000 {
				x, y, z := a.Next(), b.Next(), other.Next()
				if x != y {
					t.Fatalf("%s n=%d: same seed and stream drew %d and %d", d, n, x, y)
				}
				if x < 0 || x >= n || z < 0 || z >= n {
					t.Fatalf("%s n=%d: drew %d / %d, out of [0, %d)", d, n, x, z, n)
				}
				if x == z {
					same++
				}
			}
			// Another seed must draw another sequence (sequential ignores it).
			if d != Sequential && n >= 1000 && same > 20_000/2 {
				t.Errorf("%s n=%d: seeds 42 and 43 agree on %d of 20000 draws", d, n, same)
			}
		}
	}
}

func TestUniformFlat(t *testing.T) {
	const n, draws = 1000, 1_000_000
	g := space(t, Uniform, n).Gen(1, 2, 0, 1)
	counts := make([]float64, n)
	for range draws {
		counts[g.Next()]++
	}
	want := float64(draws) / n
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - want) * (c - want) / want
	}
	// 999 degrees of freedom: mean 999, sd ~45; 1,200 is beyond 4 sd.
	if chi2 > 1200 {
		t.Errorf("chi-square %.0f over %d buckets, want < 1200 for a flat distribution", chi2, n)
	}
}

func TestZipfianSkew(t *testing.T) {
	checkZipfian(t, space(t, Zipfian, 100_000), ZipfianConstant, 0.3)
}

// TestZipfianTheta checks that a stated θ draws its own shares: a θ that
// were ignored would draw YCSB's 0.99 shares, far from these.
func TestZipfianTheta(t *testing.T) {
	for _, c := range []struct{ theta, minHot float64 }{{0.5, 0.02}, {0.8, 0.1}, {0.99, 0.3}} {
		s, err := NewTheta(Zipfian, 100_000, c.theta)
		if err != nil {
			t.Fatal(err)
		}
		if s.Theta() != c.theta {
			t.Errorf("Theta() = %v, want %v", s.Theta(), c.theta)
		}
		checkZipfian(t, s, c.theta, c.minHot)
	}
	for _, bad := range []float64{0, 1, 1.5, -0.5, math.NaN(), math.Inf(1)} {
		if _, err := NewTheta(Zipfian, 10, bad); err == nil {
			t.Errorf("NewTheta(zipfian, theta %v) = nil error", bad)
		}
	}
	if _, err := NewTheta(Uniform, 10, 0); err != nil {
		t.Errorf("a uniform ignores theta: %v", err)
	}
}

// checkZipfian draws from a zipfian space of θ theta and checks the
// hottest key's and the 1% hottest keys' shares against the theory.
func checkZipfian(t *testing.T, s *Space, theta, minHot float64) {
	t.Helper()
	const draws = 2_000_000
	n := int64(s.n)
	hot := n / 100
	g := s.Gen(42, 1, 0, 1)
	counts := make([]int, n)
	for range draws {
		counts[g.Next()]++
	}
	byCount := slices.Clone(counts)
	slices.SortFunc(byCount, func(a, b int) int { return b - a })
	share := func(top int) float64 {
		sum := 0
		for _, c := range byCount[:top] {
			sum += c
		}
		return float64(sum) / draws
	}
	zn := Zeta(n, theta)
	// The hottest key is rank 0, whose probability YCSB draws exactly.
	if got, want := share(1), 1/zn; math.Abs(got-want) > 0.05*want {
		t.Errorf("hottest key took %.4f of draws, theory 1/zeta(n) = %.4f", got, want)
	}
	// The 1% hottest: Gray's approximation for ranks ≥ 2, so a looser bound.
	if got, want := share(int(hot)), Zeta(hot, theta)/zn; math.Abs(got-want) > 0.03 {
		t.Errorf("theta %v: 1%% hottest keys took %.3f of draws, theory zeta(%d)/zeta(%d) = %.3f", theta, got, hot, n, want)
	}
	t.Logf("theta %v: hottest key %.4f (theory %.4f), 1%% hottest %.4f (theory %.4f)", theta, share(1), 1/zn, share(int(hot)), Zeta(hot, theta)/zn)
	// Uniform would give the 1% hottest about 1%: make sure it is skewed.
	if share(int(hot)) < minHot {
		t.Errorf("theta %v: 1%% hottest keys took only %.3f of draws", theta, share(int(hot)))
	}
	// Scrambled: the hot keys are spread over the keyspace, not the lowest
	// indexes. Of the 1,000 hottest, about 1% should sit in each 1% slice.
	low := 0
	for _, c := range counts[:hot] {
		if c >= byCount[hot-1] {
			low++
		}
	}
	if int64(low) > hot/20 {
		t.Errorf("%d of the %d hottest keys are among the lowest %d indexes: not scrambled", low, hot, hot)
	}
}

func TestSequentialStrides(t *testing.T) {
	const n, workers = 10, 3
	s := space(t, Sequential, n)
	seen := make([]int, n)
	for w := range workers {
		g := s.Gen(1, uint64(w), w, workers)
		for k := range 4 {
			i := g.Next()
			if want := int64((w + k*workers) % n); i != want {
				t.Fatalf("worker %d draw %d: got %d, want %d", w, k, i, want)
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c == 0 {
			t.Errorf("key %d never drawn by the %d workers' first pass", i, workers)
		}
	}
}

func TestFeistelIsPermutation(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 5, 16, 17, 1000, 4097} {
		f := newFeistel(n)
		seen := make([]bool, n)
		for x := range n {
			y := f.apply(x)
			if y >= n || seen[y] {
				t.Fatalf("n=%d: %d maps to %d, out of range or taken", n, x, y)
			}
			seen[y] = true
		}
	}
}

// TestDrawsAllocateNothing; the set-up's speed is BenchmarkSetup's (a
// timed test failed on a loaded 2-CPU machine: 615 ms).
func TestDrawsAllocateNothing(t *testing.T) {
	for _, d := range Dists {
		g := space(t, d, 1_000_000).Gen(1, 1, 0, 4)
		if a := testing.AllocsPerRun(1000, func() { g.Next() }); a != 0 {
			t.Errorf("%s: %v allocations per draw", d, a)
		}
	}
}

func TestParseAndNewReject(t *testing.T) {
	if _, err := Parse("pareto"); err == nil {
		t.Error("Parse accepted pareto")
	}
	if _, err := New(Zipfian, 0); err == nil {
		t.Error("New accepted an empty keyspace")
	}
	if _, err := New("latest", 10); err == nil {
		t.Error("New accepted an unknown distribution")
	}
}

// BenchmarkSetup: a zipfian space over 1M keys; well under a second on the
// 2-CPU VM.
func BenchmarkSetup(b *testing.B) {
	for b.Loop() {
		if _, err := New(Zipfian, 1_000_000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	for _, d := range Dists {
		b.Run(string(d), func(b *testing.B) {
			g := space(b, d, 1_000_000).Gen(1, 1, 0, 1)
			var sink int64
			for b.Loop() {
				sink += g.Next()
			}
			_ = sink
		})
	}
}
