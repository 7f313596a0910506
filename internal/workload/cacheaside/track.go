package cacheaside

import (
	"sync"
	"sync/atomic"
	"time"
)

// commitRing is how many commit times the tracker keeps per key: a stale
// read's age is exact while fewer newer versions were committed since the
// one it read, else a lower bound (Staleness.AgesLowerBound).
const commitRing = 4

// TrackBytesPerKey is the tracker's memory per key: the last committed
// version and commitRing commit times, 8 bytes each.
const TrackBytesPerKey = 8 + 8*commitRing

// writeLocks is how many locks serialize the writes to a key (striped by
// key index), as the database's row lock would serialize two transactions
// updating one row: versions then commit in order.
const writeLocks = 1024

// tracker is what the workload knows of the database: per key, the last
// committed version and when recent versions committed. The database row is
// the truth; the tracker is updated after its commit returns, so a read
// that starts later must see that version or a newer one.
type tracker struct {
	committed []atomic.Uint64
	times     []atomic.Int64 // [key*commitRing + version%commitRing]: Unix ns of that version's commit
	locks     [writeLocks]sync.Mutex
}

func newTracker(keys int64) *tracker {
	return &tracker{committed: make([]atomic.Uint64, keys), times: make([]atomic.Int64, keys*commitRing)}
}

// lock serializes the writes to key i; unlock with the returned func.
func (t *tracker) lock(i int64) *sync.Mutex {
	m := &t.locks[i%writeLocks]
	m.Lock()
	return m
}

// next is the version the next write of key i commits; call it locked.
func (t *tracker) next(i int64) uint64 { return t.committed[i].Load() + 1 }

// commit records that version v of key i committed at now; call it locked.
// The time is stored before the version, so a reader that sees v finds its
// time.
func (t *tracker) commit(i int64, v uint64, now time.Time) {
	t.times[i*commitRing+int64(v%commitRing)].Store(now.UnixNano())
	t.committed[i].Store(v)
}

// last is the last committed version of key i.
func (t *tracker) last(i int64) uint64 { return t.committed[i].Load() }

// age is how long version got of key i has been stale at now: since the
// commit of got+1. exact is false when got+1's time had left the ring and
// the oldest one kept stands in for it (a lower bound).
func (t *tracker) age(i int64, got uint64, now time.Time) (age time.Duration, exact bool) {
	newer := got + 1
	latest := t.committed[i].Load()
	exact = latest-newer < commitRing
	if !exact {
		newer = latest - commitRing + 1
	}
	at := t.times[i*commitRing+int64(newer%commitRing)].Load()
	if t.committed[i].Load()-newer >= commitRing {
		exact = false // overwritten while read: a newer commit's time, still a lower bound
	}
	return max(now.Sub(time.Unix(0, at)), 0), exact
}

// seen is one client's memory of the versions it read: a direct-mapped
// table by key index, so its size is bounded whatever the keyspace.
type seen struct {
	key     []int64 // -1: empty
	version []uint64
}

// maxMonotonicSlots bounds each client's table: 65,536 slots of 16 bytes
// (1 MiB); a larger keyspace shares slots, and a key whose slot another
// took is not checked.
const maxMonotonicSlots = 1 << 16

func monotonicSlots(keys int64) int64 { return min(keys, maxMonotonicSlots) }

func newSeen(keys int64) *seen {
	n := monotonicSlots(keys)
	s := &seen{key: make([]int64, n), version: make([]uint64, n)}
	for i := range s.key {
		s.key[i] = -1
	}
	return s
}

// read records that this client read version v of key i and says whether
// that broke monotonic reads: it had read a newer one before.
func (s *seen) read(i int64, v uint64) (broken bool) {
	slot := i % int64(len(s.key))
	if s.key[slot] == i {
		if v < s.version[slot] {
			return true
		}
		s.version[slot] = v
		return false
	}
	s.key[slot], s.version[slot] = i, v
	return false
}
