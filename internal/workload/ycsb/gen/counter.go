package gen

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Counter is CounterGenerator: 0, 1, … from a start, shared by the workers
// (CoreWorkload's keysequence, the load phase's key numbers).
type Counter struct{ next atomic.Int64 }

// NewCounter starts a counter at start.
func NewCounter(start int64) *Counter {
	c := &Counter{}
	c.next.Store(start)
	return c
}

// Next is nextValue(): the next number (getAndIncrement).
func (c *Counter) Next() int64 { return c.next.Add(1) - 1 }

// Last is lastValue(): the number Next returned last.
func (c *Counter) Last() int64 { return c.next.Load() - 1 }

// AckWindow is AcknowledgedCounterGenerator.WINDOW_SIZE: how many numbers
// may be handed out and not yet acknowledged. Its bitmap is 128 KiB,
// whatever the key count.
const AckWindow = 1 << 20

const ackMask = AckWindow - 1

// AckCounter is AcknowledgedCounterGenerator, CoreWorkload's
// transactioninsertkeysequence: the run phase's inserts take numbers from
// it (the first is recordcount), and Last, which the key choosers read, is
// the highest number below which every number has been acknowledged, so
// reads never ask for a key whose insert has not finished.
type AckCounter struct {
	Counter
	limit  atomic.Int64
	mu     sync.Mutex
	window [AckWindow / 64]atomic.Uint64
}

// NewAckCounter starts at start; Last is start-1 until start is
// acknowledged.
func NewAckCounter(start int64) *AckCounter {
	c := &AckCounter{}
	c.next.Store(start)
	c.limit.Store(start - 1)
	return c
}

// Last is lastValue(): the highest acknowledged number (as opposed to the
// highest handed out).
func (c *AckCounter) Last() int64 { return c.limit.Load() }

// Acknowledge is acknowledge(value): it marks value done and, when no other
// worker is already doing so (tryLock, as YCSB), moves Last over the run of
// acknowledged numbers that follows it. A worker that finds the lock taken
// leaves its number for the next acknowledgement to collect, as YCSB does.
// Java throws when value's slot is still taken; this returns an error.
func (c *AckCounter) Acknowledge(value int64) error {
	slot := value & ackMask
	bit := uint64(1) << (slot & 63)
	if c.window[slot>>6].Or(bit)&bit != 0 {
		return fmt.Errorf("insert key %d: more than %d insertion keys unacknowledged", value, AckWindow)
	}
	if !c.mu.TryLock() {
		return nil
	}
	defer c.mu.Unlock()
	limit := c.limit.Load()
	// YCSB compares the full index with a masked one here, so this bound
	// hardly ever stops the loop; the first unacknowledged slot does.
	beforeFirstSlot := limit & ackMask
	index := limit + 1
	for ; index != beforeFirstSlot; index++ {
		s := index & ackMask
		b := uint64(1) << (s & 63)
		if c.window[s>>6].Load()&b == 0 {
			break
		}
		c.window[s>>6].And(^b)
	}
	c.limit.Store(index - 1)
	return nil
}
