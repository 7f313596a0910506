package sessions

import (
	"container/heap"
	"math/rand/v2"
	"sync"
)

// Session states in the tracker.
const (
	stFree uint8 = iota
	stActive
	stIdle    // active period over, not yet surely expired
	stExpired // past its latest possible expiry, in the expired ring
)

// slot is the client's model of one session: the bounds of its expiry, in
// Unix nanoseconds. A session created (or kept alive) by a request sent at
// t1 and answered at t2 expires no earlier than t1 + window and no later
// than t2 + TTL, whatever the server's clock did in between.
type slot struct {
	id       int64
	nonce    uint64
	lower    int64 // earliest possible expiry
	upper    int64 // latest possible expiry
	until    int64 // end of the active period
	wrote    int64 // when the last create or extension was answered
	pos      int32 // index in tracker.active, while active
	state    uint8
	queued   bool // in the keepalive buffer
	unjudged bool // its expiry cannot be bounded any more
}

// due is a heap entry: a slot and the time something is due for it.
type due struct {
	at   int64
	slot int32
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ringSize is how many surely expired sessions are kept to read again.
const ringSize = 4096

// tracker is the model of every session the run created and has not
// forgotten: the active ones (read at random), the idle ones (waiting to
// expire) and a ring of expired ones (read to catch stale reads). Its one
// lock is taken once per operation.
type tracker struct {
	mu      sync.Mutex
	slots   []slot
	free    []int32
	active  []int32
	byUntil dueHeap // active sessions by the end of their active period
	byUpper dueHeap // idle sessions by their latest expiry + slackHi
	ring    [ringSize]int32
	ringN   int
	ringAt  int // oldest entry
	dirty   []int32
	dirtyID []int64

	ttl, window int64
	// The store's expiry clock may run early by up to slackLo and late by
	// up to slackHi (Memcached: 1 s early, 2 s late with a TTL that is not
	// whole seconds).
	slackLo, slackHi int64
}

func newTracker(ttl, window, slackLo, slackHi int64) *tracker {
	return &tracker{ttl: ttl, window: window, slackLo: slackLo, slackHi: slackHi}
}

// add records a session created by a request sent at t1 and answered at
// t2, active for activeFor nanoseconds.
func (t *tracker) add(id int64, nonce uint64, t1, t2, activeFor int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
	} else {
		t.slots = append(t.slots, slot{})
		i = int32(len(t.slots) - 1)
	}
	t.slots[i] = slot{id: id, nonce: nonce, lower: t1 + t.ttl, upper: t2 + t.ttl, until: t2 + activeFor, wrote: t2,
		pos: int32(len(t.active)), state: stActive}
	t.active = append(t.active, i)
	heap.Push(&t.byUntil, due{t2 + activeFor, i})
}

func (t *tracker) removeActive(i int32) {
	s := &t.slots[i]
	last := t.active[len(t.active)-1]
	t.active[s.pos] = last
	t.slots[last].pos = s.pos
	t.active = t.active[:len(t.active)-1]
	s.pos = -1
}

// expire moves slot i into the expired ring, forgetting the oldest there.
func (t *tracker) expire(i int32) {
	t.slots[i].state = stExpired
	if t.ringN == ringSize {
		old := t.ring[t.ringAt]
		t.slots[old] = slot{state: stFree}
		t.free = append(t.free, old)
		t.ring[t.ringAt] = i
		t.ringAt = (t.ringAt + 1) % ringSize
		return
	}
	t.ring[(t.ringAt+t.ringN)%ringSize] = i
	t.ringN++
}

// advance moves sessions whose active period ended to idle, and idle ones
// past their latest expiry to the expired ring.
func (t *tracker) advance(now int64) {
	for len(t.byUntil) > 0 && t.byUntil[0].at <= now {
		d := heap.Pop(&t.byUntil).(due)
		s := &t.slots[d.slot]
		if s.state != stActive || s.until != d.at {
			continue
		}
		t.removeActive(d.slot)
		s.state = stIdle
		heap.Push(&t.byUpper, due{s.upper + t.slackHi, d.slot})
	}
	for len(t.byUpper) > 0 && t.byUpper[0].at <= now {
		d := heap.Pop(&t.byUpper).(due)
		s := &t.slots[d.slot]
		if s.state != stIdle {
			continue
		}
		if at := s.upper + t.slackHi; at > now { // extended since it went idle
			heap.Push(&t.byUpper, due{at, d.slot})
			continue
		}
		t.expire(d.slot)
	}
}

// pick is a session chosen for a read, as the model saw it then.
type pick struct {
	slot     int32
	id       int64
	nonce    uint64
	lower    int64
	expired  bool // chosen among the surely expired
	unjudged bool
}

// pick chooses a session to read: with probability expiredShare one from
// the expired ring, else an active one. Active sessions found past their
// latest expiry (no read kept them alive) move to the ring on the way.
func (t *tracker) pick(r *rand.Rand, now int64, expiredShare float64) (pick, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.advance(now)
	if t.ringN > 0 && r.Float64() < expiredShare {
		i := t.ring[(t.ringAt+r.IntN(t.ringN))%ringSize]
		s := &t.slots[i]
		return pick{slot: i, id: s.id, nonce: s.nonce, lower: s.lower, expired: true, unjudged: s.unjudged}, true
	}
	for len(t.active) > 0 {
		i := t.active[r.IntN(len(t.active))]
		s := &t.slots[i]
		if s.upper+t.slackHi < now {
			t.removeActive(i)
			t.expire(i)
			continue
		}
		return pick{slot: i, id: s.id, nonce: s.nonce, lower: s.lower, unjudged: s.unjudged}, true
	}
	return pick{}, false
}

// verdict is what the model says of one read.
type verdict struct {
	stale, lost, unjudged bool
	late                  int64 // ns after the latest expiry, for a stale read
	sinceWrite            int64 // ns since the session's last create or extension
}

// afterRead judges a read sent at t1 and answered at t2 and updates the
// model: a read that keeps alive moves the bounds; otherwise a hit queues
// the session for the next keepalive.
func (t *tracker) afterRead(p pick, hit bool, t1, t2 int64, keepaliveOnRead bool) verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[p.slot]
	if s.id != p.id || s.state == stFree {
		return verdict{unjudged: true} // forgotten meanwhile
	}
	v := verdict{unjudged: p.unjudged || s.unjudged, sinceWrite: t2 - s.wrote}
	switch {
	case v.unjudged:
	case hit && t1 > s.upper+t.slackHi:
		v.stale, v.late = true, t1-s.upper
	case !hit && t2 < p.lower-t.slackLo:
		v.lost = true
	}
	if !hit {
		return v
	}
	if keepaliveOnRead {
		// A hit means the session was live when the read ran, so its
		// extension ran too (or was skipped as fresh).
		s.lower, s.upper, s.wrote = max(s.lower, t1+t.window), max(s.upper, t2+t.ttl), t2
		return v
	}
	if s.state == stActive && !s.queued {
		s.queued = true
		t.dirty = append(t.dirty, p.slot)
		t.dirtyID = append(t.dirtyID, p.id)
	}
	return v
}

// takeDirty hands the keepalive buffer over, leaving an empty one.
func (t *tracker) takeDirty(slots []int32, ids []int64) ([]int32, []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	slots, ids = append(slots[:0], t.dirty...), append(ids[:0], t.dirtyID...)
	t.dirty, t.dirtyID = t.dirty[:0], t.dirtyID[:0]
	return slots, ids
}

// afterKeepalive updates the model after a keepalive sent at t1 and
// answered at t2. A session that may have expired before it ran cannot be
// judged any more: the keepalive does not bring expired sessions back.
func (t *tracker) afterKeepalive(slots []int32, ids []int64, t1, t2 int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, i := range slots {
		s := &t.slots[i]
		if s.id != ids[k] || s.state == stFree {
			continue
		}
		s.queued = false
		switch {
		case !ok || t1 >= s.lower-t.slackLo:
			s.unjudged = true
		default:
			s.lower, s.upper, s.wrote = max(s.lower, t1+t.window), max(s.upper, t2+t.ttl), t2
		}
	}
}

// counts returns the number of active, idle and tracked sessions.
func (t *tracker) counts() (active, tracked int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.active), len(t.slots) - len(t.free)
}
