package workload

import (
	"testing"
)

func TestShardRangeCoversTotal(t *testing.T) {
	for _, tc := range []struct {
		total int64
		count int
	}{{7, 3}, {1000, 3}, {10, 10}, {3, 7}, {0, 2}, {100_000, 1024}, {1, 1}} {
		next := int64(0)
		for i := 0; i < tc.count; i++ {
			first, n := Shard{Index: i, Count: tc.count}.Range(tc.total)
			if first != next {
				t.Fatalf("%d over %d: shard %d starts at %d, want %d (parts must be contiguous and disjoint)", tc.total, tc.count, i, first, next)
			}
			if want := tc.total / int64(tc.count); n != want && n != want+1 {
				t.Fatalf("%d over %d: shard %d has %d, want %d or %d", tc.total, tc.count, i, n, want, want+1)
			}
			next += n
		}
		if next != tc.total {
			t.Fatalf("%d over %d: shards cover %d", tc.total, tc.count, next)
		}
	}
}

func TestLoadShareSumsToWhole(t *testing.T) {
	whole := Load{Clients: 7, Rate: 1000, Ops: 1_000_001, WarmupOps: 5}
	var clients int
	var ops, warm int64
	var rate float64
	for i := 0; i < 3; i++ {
		l, err := whole.Share(Shard{Index: i, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		clients += l.Clients
		ops += l.Ops
		warm += l.WarmupOps
		rate += l.Rate
		if i == 0 && (l.Clients != 3 || l.Ops != 333_334 || l.WarmupOps != 2) {
			t.Fatalf("shard 0/3 of %+v = %+v: the remainders go to the first shards", whole, l)
		}
		if i == 2 && (l.Clients != 2 || l.Ops != 333_333 || l.WarmupOps != 1) {
			t.Fatalf("shard 2/3 of %+v = %+v", whole, l)
		}
	}
	if clients != 7 || ops != whole.Ops || warm != 5 || rate < 1000-1e-9 || rate > 1000+1e-9 {
		t.Fatalf("shares add up to clients %d ops %d warm-up %d rate %v, want %+v", clients, ops, warm, rate, whole)
	}
}

func TestLoadShareRefusesEmptyShare(t *testing.T) {
	if _, err := (Load{Clients: 2}).Share(Shard{Index: 2, Count: 3}); err == nil {
		t.Fatal("shard 2/3 of 2 clients: want an error, a shard with no client measures nothing")
	}
	if _, err := (Load{Clients: 4, Ops: 2}).Share(Shard{Index: 2, Count: 3}); err == nil {
		t.Fatal("shard 2/3 of 2 ops: want an error")
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "2/3": {2, 3}, "1023/1024": {1023, 1024}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"3/3", "4/3", "1/0", "1/1025", "a/b", "1", "", "-1/2", "1/2/3", "0/0"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q): want an error", in)
		}
	}
}

// The shards' workers are numbered as the whole run's, each number once,
// so together they draw the whole run's key and op streams.
func TestPartNumbersWorkersAsTheWholeRun(t *testing.T) {
	whole := Load{Clients: 7}
	seen := map[int]bool{}
	for i := 0; i < 3; i++ {
		s := Shard{Index: i, Count: 3}
		share, err := whole.Share(s)
		if err != nil {
			t.Fatal(err)
		}
		part := s.Part(whole)
		for w := range share.Clients {
			n, of := part.Worker(w, share.Clients)
			if of != 7 || seen[n] || n < 0 || n >= 7 {
				t.Fatalf("shard %v worker %d is the whole run's %d of %d (seen: %v)", s, w, n, of, seen)
			}
			seen[n] = true
		}
	}
	if len(seen) != 7 {
		t.Fatalf("the shards' workers are %v of the whole run's 7", seen)
	}
	if n, of := (Part{}).Worker(2, 5); n != 2 || of != 5 {
		t.Fatalf("an unsharded run's worker 2 of 5 is %d of %d", n, of)
	}
}

// A shard writes only its own part of the keyspace, and the parts cover it.
func TestPartWriteKeysAreDisjoint(t *testing.T) {
	const keys = 1000
	owner := map[int64]int{}
	for i := 0; i < 3; i++ {
		part := Shard{Index: i, Count: 3}.Part(Load{Clients: 3})
		first, n := part.Range(keys)
		for k := range int64(keys) {
			w := part.WriteKey(k, keys)
			if w < first || w >= first+n {
				t.Fatalf("shard %d/3 writes key %d (drawn %d) outside its part [%d, %d)", i, w, k, first, first+n)
			}
			if o, ok := owner[w]; ok && o != i {
				t.Fatalf("key %d is written by shards %d and %d", w, o, i)
			}
			owner[w] = i
		}
	}
	if len(owner) != keys {
		t.Fatalf("the shards write %d keys of %d", len(owner), keys)
	}
	if (Part{}).WriteKey(999, keys) != 999 {
		t.Fatal("an unsharded run must write the key it drew")
	}
}
