package report

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", -1000: "-1,000", 1234567: "1,234,567", -999: "-999",
		math.MaxInt64: "9,223,372,036,854,775,807",
		math.MinInt64: "-9,223,372,036,854,775,808", // once recursed forever: -MinInt64 == MinInt64
	} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestOutOfScale: figures no fixed-point text can hold print as "—" or in
// exponent form, in every helper; ordinary ones as before.
func TestOutOfScale(t *testing.T) {
	for _, c := range []struct {
		v                float64
		num, whole, ms   string
		shortest, fixed1 string
	}{
		{1e300, "1e+300", "1e+300", "1e+300", "1e+300", "1e+300"},
		{-1e300, "-1e+300", "-1e+300", "-1e+300", "-1e+300", "-1e+300"},
		{math.NaN(), "—", "—", "—", "—", "—"},
		{math.Inf(1), "—", "—", "—", "—", "—"},
		{math.Inf(-1), "—", "—", "—", "—", "—"},
		{math.MaxInt64, "9.22e+18", "9.22e+18", "9.22e+18", "9.223372036854776e+18", "9.22e+18"},
		{999_999_999_999_999, "999,999,999,999,999", "999,999,999,999,999", "999,999,999,999,999", "999999999999999", "999999999999999.0"},
		{1e15, "1e+15", "1e+15", "1e+15", "1e+15", "1e+15"},
		{math.SmallestNonzeroFloat64, "4.94e-324", "0", "0.00", "5e-324", "0.0"},
		{1234.5, "1,235", "1,235", "1,235", "1234.5", "1234.5"},
		{0.5, "0.500", "1", "0.50", "0.5", "0.5"},
	} {
		for name, got := range map[string][2]string{
			"num": {num(c.v), c.num}, "whole": {whole(c.v), c.whole}, "ms": {ms(c.v), c.ms},
			"shortest": {shortest(c.v), c.shortest}, "fixed1": {fixed(c.v, 1), c.fixed1},
		} {
			if got[0] != got[1] {
				t.Errorf("%s(%v) = %q, want %q", name, c.v, got[0], got[1])
			}
		}
	}
}

// FuzzThousands: every int64 prints, and its digits are the number's.
func FuzzThousands(f *testing.F) {
	for _, n := range []int64{0, 1, -1, 999, 1000, -1000, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		s := thousands(n)
		if got := strings.ReplaceAll(s, ",", ""); got != strconv.FormatInt(n, 10) {
			t.Fatalf("thousands(%d) = %q", n, s)
		}
		groups := strings.Split(strings.TrimPrefix(s, "-"), ",")
		for i, g := range groups {
			if len(g) > 3 || (i > 0 && len(g) != 3) || g == "" {
				t.Fatalf("thousands(%d) = %q: group %q", n, s, g)
			}
		}
	})
}

// FuzzFormat: every float64 prints through every number helper of the
// reports, short, without Go's NaN or Inf, with a sign only when negative;
// and the whole-number helpers keep the value while it is in scale.
func FuzzFormat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0.5, 999.5, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1),
		math.MaxInt64, math.MinInt64, // float64(MaxInt64) is 2^63: one past int64's range
		largestFixed, math.Nextafter(largestFixed, 0), 59.99, 60, 1e-7} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		texts := map[string]string{
			"num": num(v), "whole": whole(v), "ms": ms(v), "us": us(v), "shortest": shortest(v),
			"fixed0": fixed(v, 0), "fixed3": fixed(v, 3), "figure": figure(&v), "durationText": durationText(v),
			"durSecs": durSecs(v), "tenths": tenths(v), "stUs": stUs(v),
			"sessSeconds": sessSeconds(v), "sessScale": sessScale(v), "ratioText": ratioText(v),
		}
		for name, s := range texts {
			switch {
			case s == "" || len(s) > 40:
				t.Errorf("%s(%v) = %q", name, v, s)
			case strings.Contains(s, "NaN") || strings.Contains(s, "Inf"):
				t.Errorf("%s(%v) = %q, Go's text for no number", name, v, s)
			case !(v < 0) && strings.HasPrefix(s, "-"):
				t.Errorf("%s(%v) = %q: a sign the figure does not have", name, v, s)
			}
		}
		if math.Abs(v) < largestFixed {
			got, err := strconv.ParseFloat(strings.ReplaceAll(whole(v), ",", ""), 64)
			if err != nil || got != math.Round(v) {
				t.Errorf("whole(%v) = %q, want %v", v, whole(v), math.Round(v))
			}
		}
	})
}

// TestScalesOfExtremeData: chart axes over any data end, with a bounded
// number of ticks at finite positions; an infinite bound once gave a log
// axis 2^63 decades (none on amd64, where int(+Inf) is MinInt64, and a
// loop to MaxInt64 where it saturates), and a linear step too small to
// change a huge value never passed the axis's end.
func TestScalesOfExtremeData(t *testing.T) {
	for _, c := range [][2]float64{{1, math.Inf(1)}, {math.SmallestNonzeroFloat64, math.MaxFloat64}, {math.NaN(), math.NaN()},
		{0, 1e300}, {math.Inf(1), math.Inf(1)}, {1e-300, 1}} {
		s := newLogScale(c[0], c[1], 0, 600, usLabel)
		ticks := s.ticks()
		if len(ticks) == 0 || len(ticks) > 3*700 {
			t.Errorf("log scale %v: %d ticks", c, len(ticks))
		}
		for _, tk := range ticks {
			if p := s.pos(tk.v); math.IsNaN(p) || math.IsInf(p, 0) {
				t.Errorf("log scale %v: tick %v at %v", c, tk.v, p)
				break
			}
		}
	}
	done := make(chan int, 1)
	go func() {
		n := 0
		for _, hi := range []float64{math.Inf(1), math.MaxFloat64, 1e300, math.NaN(), 1e17} {
			n = max(n, len(newLinScale(0, hi, 0, 600, trimNum).ticks()))
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n > maxLinTicks+1 {
			t.Errorf("a linear scale with %d ticks", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a linear scale's ticks never end")
	}
}

// The axis labels switch units at each unit's size and keep 4 significant
// digits: 999 µs stays in µs, 1000 µs is 1 ms.
func TestAxisLabelUnits(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{usLabel(0), "0 µs"}, {usLabel(999), "999 µs"}, {usLabel(1000), "1 ms"}, {usLabel(2500), "2.5 ms"},
		{usLabel(999_999), "1000 ms"}, {usLabel(1e6), "1 s"}, {usLabel(3.6e9), "3600 s"}, {usLabel(-5), "-5 µs"},
		{msLabel(0.5), "500 µs"}, {msLabel(1500), "1.5 s"},
		{countLabel(0.5), "0.5"}, {countLabel(999), "999"}, {countLabel(1000), "1k"}, {countLabel(12_345), "12.35k"},
		{countLabel(1e6), "1M"}, {countLabel(2e9), "2G"}, {countLabel(5e12), "5000G"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
