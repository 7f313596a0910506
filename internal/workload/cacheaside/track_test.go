package cacheaside

import (
	"testing"
	"time"
)

// TestTrackerAge: a stale read's age runs from the commit of the first
// version newer than the one it read; once that commit time has left the
// ring, the oldest kept stands in and the age says it is a lower bound.
func TestTrackerAge(t *testing.T) {
	tr := newTracker(3)
	t0 := time.Unix(1000, 0)
	at := func(v uint64) time.Time { return t0.Add(time.Duration(v) * time.Second) }
	for v := uint64(1); v <= 6; v++ {
		m := tr.lock(1)
		if next := tr.next(1); next != v {
			t.Fatalf("next version %d, want %d", next, v)
		}
		tr.commit(1, v, at(v))
		m.Unlock()
	}
	now := at(10)
	for _, c := range []struct {
		got   uint64
		age   time.Duration
		exact bool
	}{
		{5, 4 * time.Second, true},  // v6 committed at 6 s
		{2, 7 * time.Second, true},  // v3 at 3 s, the oldest the ring keeps
		{1, 7 * time.Second, false}, // v2 left the ring: v3's time, a lower bound
		{0, 7 * time.Second, false},
	} {
		age, exact := tr.age(1, c.got, now)
		if age != c.age || exact != c.exact {
			t.Errorf("read v%d: age %v exact %v, want %v %v", c.got, age, exact, c.age, c.exact)
		}
	}
	if tr.last(1) != 6 || tr.last(0) != 0 || tr.last(2) != 0 {
		t.Errorf("last versions %d %d %d, want 0 6 0", tr.last(0), tr.last(1), tr.last(2))
	}
}

// TestSeenMonotonic: a client that read a version of a key and then an
// older one broke monotonic reads; another key in the same slot takes it
// over, and is then the one checked.
func TestSeenMonotonic(t *testing.T) {
	s := newSeen(4)
	steps := []struct {
		key     int64
		version uint64
		broken  bool
	}{
		{1, 3, false},
		{1, 5, false},
		{1, 4, true}, // older than 5, read before
		{1, 5, false},
		{2, 1, false},
		{1, 1, true},
	}
	for i, st := range steps {
		if got := s.read(st.key, st.version); got != st.broken {
			t.Errorf("step %d: read key %d v%d: broken %v, want %v", i, st.key, st.version, got, st.broken)
		}
	}
	big := newSeen(1 << 20)
	if len(big.key) != maxMonotonicSlots {
		t.Errorf("%d slots for a million keys, want the bound %d", len(big.key), maxMonotonicSlots)
	}
	// Keys 0 and 65536 share a slot: the newer owner is checked, the
	// evicted key starts afresh.
	big.read(0, 9)
	big.read(maxMonotonicSlots, 1)
	if big.read(0, 2) {
		t.Error("an evicted key was checked against its old version")
	}
}
