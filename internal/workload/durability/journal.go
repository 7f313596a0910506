package durability

import (
	"sort"
	"time"
)

// markEvery is the resolution of a journal's time marks, and so of the loss
// window: an acknowledgement at least this long after the last mark adds one.
const markEvery = time.Millisecond

// journal is one writer's record of its acknowledged writes. A writer writes
// its sequence one write at a time, so the acknowledged seqs are always
// 0..acked-1 and at most seq acked is in flight: two numbers are the whole
// journal, however many writes. The marks place acknowledgements in time
// (at most one per markEvery, so their number grows with the trial's
// length, not with its writes). Only the writer's goroutine writes it; it is
// read once the writers have stopped.
type journal struct {
	acked int64 // seqs 0..acked-1 are acknowledged
	sent  bool  // seq acked was sent and not acknowledged (in flight)
	marks []mark
}

// mark says that n writes were acknowledged at time at (since the trial began).
type mark struct {
	at time.Duration
	n  int64
}

func (j *journal) ack(at time.Duration) {
	j.acked++
	j.sent = false
	if len(j.marks) == 0 || at-j.marks[len(j.marks)-1].at >= markEvery {
		j.marks = append(j.marks, mark{at: at, n: j.acked})
	}
}

// ackedAt returns when seq was acknowledged, to within markEvery (the time
// of the last mark at or before its acknowledgement). ok is false when seq
// was not acknowledged.
func (j *journal) ackedAt(seq int64) (at time.Duration, ok bool) {
	if seq < 0 || seq >= j.acked || len(j.marks) == 0 {
		return 0, false
	}
	// The first mark with n > seq+1 came after seq's acknowledgement.
	i := sort.Search(len(j.marks), func(i int) bool { return j.marks[i].n > seq+1 })
	if i == 0 {
		return j.marks[0].at, true
	}
	return j.marks[i-1].at, true
}

// ackedSince returns how many writes were acknowledged at or after t, to
// within markEvery.
func (j *journal) ackedSince(t time.Duration) int64 {
	// Writes acknowledged before t: at least the count of the last mark
	// before t; and when that mark is markEvery or more before t, also the
	// unmarked ones after it, which came within markEvery of it.
	i := sort.Search(len(j.marks), func(i int) bool { return j.marks[i].at >= t })
	if i == 0 {
		return j.acked
	}
	before := j.marks[i-1].n
	if j.marks[i-1].at+markEvery <= t {
		before = j.acked
		if i < len(j.marks) {
			before = j.marks[i].n - 1
		}
	}
	return j.acked - before
}
