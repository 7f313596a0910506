package gen

import (
	"strings"
	"testing"
)

// core sets up the Core of a property file's text.
func core(t testing.TB, text string) *Core {
	t.Helper()
	p, err := Parse(strings.NewReader(text))
	return mustCore(t, p, err)
}

// standardCore sets up the Core of core workload name.
func standardCore(t testing.TB, name string) *Core {
	t.Helper()
	p, err := Standard(name)
	return mustCore(t, p, err)
}

func mustCore(t testing.TB, p Properties, err error) *Core {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCore(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The load hands out insertstart … insertstart+insertcount-1 once, across
// workers, and the first keys are YCSB's.
func TestLoadKeys(t *testing.T) {
	c := core(t, "recordcount=100\ninsertstart=10\ninsertcount=50")
	a, b := c.Worker(1, 1), c.Worker(1, 2)
	seen := map[int64]bool{}
	for i := 0; ; i++ {
		w := &a
		if i%2 == 1 {
			w = &b
		}
		k, ok := w.NextLoadKeynum()
		if !ok {
			break
		}
		if k < 10 || k >= 60 || seen[k] {
			t.Fatalf("load key number %d: out of [10, 60) or handed out twice", k)
		}
		seen[k] = true
	}
	if len(seen) != 50 {
		t.Errorf("the load handed out %d key numbers, want insertcount 50", len(seen))
	}
	if got := string(c.AppendKey(nil, 0)); got != "user6284781860667377211" {
		t.Errorf("key 0 = %s, YCSB's user6284781860667377211", got)
	}
	if got := string(c.AppendFieldName(nil, 3)); got != "field3" {
		t.Errorf("field 3 = %s, want field3", got)
	}
}

// No distribution asks for a key above the last acknowledged insert: the
// zipfian's range is widened by the expected inserts (E: 1000 records,
// 1000 ops × 0.05 × 2 = 100 more) and draws beyond are drawn again.
func TestKeynumsStayBelowLastInsert(t *testing.T) {
	for _, c := range []struct {
		name, text string
		lo, hi     int64
	}{
		{"uniform", "recordcount=1000\ninsertstart=100\ninsertcount=500", 100, 599},
		{"zipfian", "recordcount=1000\nscanproportion=0.95\ninsertproportion=0.05\nreadproportion=0\nupdateproportion=0\nrequestdistribution=zipfian", 0, 999},
		{"latest", "recordcount=1000\ninsertproportion=0.05\nrequestdistribution=latest", 0, 999},
	} {
		cw := core(t, c.text)
		if c.name == "zipfian" && cw.keyScrambled.itemcount != 1101 {
			t.Errorf("zipfian over %d items, want 1000 + 100 expected inserts + 1 (ScrambledZipfianGenerator(0, 1100))", cw.keyScrambled.itemcount)
		}
		w := cw.Worker(9, 1)
		hi := c.hi
		for i := range 50_000 {
			if i%1000 == 999 && c.name != "uniform" { // an insert now and then
				k := w.NextInsertKeynum()
				if err := w.Acknowledge(k); err != nil {
					t.Fatal(err)
				}
				hi = k
			}
			k := w.NextKeynum()
			if k < c.lo || k > hi || k > cw.LastInsert() {
				t.Fatalf("%s: key number %d, out of [%d, %d]", c.name, k, c.lo, hi)
			}
		}
	}
}

// A worker's lengths: E's scans 1 to 100, fields of 100 bytes.
func TestLengths(t *testing.T) {
	w := standardCore(t, "e").Worker(3, 3)
	lo, hi := int64(1000), int64(0)
	for range 10_000 {
		n := w.NextScanLength()
		lo, hi = min(lo, n), max(hi, n)
		if f := w.NextField(); f < 0 || f >= 10 {
			t.Fatalf("field %d, out of [0, 10)", f)
		}
		if l := w.NextFieldLength(); l != 100 {
			t.Fatalf("field length %d, want the constant 100", l)
		}
	}
	if lo != 1 || hi != 100 {
		t.Errorf("scan lengths %d to %d, want 1 to 100", lo, hi)
	}
}

// BenchmarkNextKey is a key choice and its name, per request distribution:
// zero allocations is the goal.
func BenchmarkNextKey(b *testing.B) {
	for _, d := range []RequestDist{RequestUniform, RequestZipfian, RequestLatest} {
		b.Run(string(d), func(b *testing.B) {
			c := core(b, "recordcount=1000000\noperationcount=1000000\ninsertproportion=0.05\nrequestdistribution="+string(d))
			w := c.Worker(1, 1)
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				buf = c.AppendKey(buf[:0], w.NextKeynum())
			}
		})
	}
}

func TestNextKeyDoesNotAllocate(t *testing.T) {
	for _, d := range []RequestDist{RequestUniform, RequestZipfian, RequestLatest} {
		c := core(t, "recordcount=1000\nrequestdistribution="+string(d))
		w := c.Worker(1, 1)
		buf := make([]byte, 0, 64)
		if allocs := testing.AllocsPerRun(1000, func() { buf = c.AppendKey(buf[:0], w.NextKeynum()); w.NextOp() }); allocs != 0 {
			t.Errorf("%s: %v allocations a key choice", d, allocs)
		}
	}
}
