package gen

import (
	"strings"
	"sync"
	"testing"
)

func TestCounter(t *testing.T) {
	c := NewCounter(5)
	if c.Last() != 4 {
		t.Errorf("Last before any Next = %d, want 4 (CounterGenerator: counter - 1)", c.Last())
	}
	for want := int64(5); want < 8; want++ {
		if got := c.Next(); got != want {
			t.Errorf("Next = %d, want %d", got, want)
		}
	}
	if c.Last() != 7 {
		t.Errorf("Last = %d, want 7", c.Last())
	}
}

// Last moves only over a contiguous run of acknowledged numbers: reads
// never ask for a key whose insert, or an earlier one, is unfinished.
func TestAckCounterOutOfOrder(t *testing.T) {
	c := NewAckCounter(1000)
	if c.Last() != 999 {
		t.Fatalf("Last at start = %d, want 999 (recordcount - 1)", c.Last())
	}
	a, b, d := c.Next(), c.Next(), c.Next()
	if a != 1000 || b != 1001 || d != 1002 {
		t.Fatalf("Next gave %d, %d, %d, want 1000, 1001, 1002", a, b, d)
	}
	for _, step := range []struct{ ack, last int64 }{{1002, 999}, {1001, 999}, {1000, 1002}} {
		if err := c.Acknowledge(step.ack); err != nil {
			t.Fatal(err)
		}
		if c.Last() != step.last {
			t.Errorf("after acknowledging %d: Last %d, want %d", step.ack, c.Last(), step.last)
		}
	}
}

// A number whose window slot is still taken (2^20 numbers unacknowledged)
// is refused, where YCSB throws.
func TestAckCounterWindowFull(t *testing.T) {
	c := NewAckCounter(0)
	if err := c.Acknowledge(1); err != nil { // 0 pending: 1 waits in its slot
		t.Fatal(err)
	}
	err := c.Acknowledge(1 + AckWindow)
	if err == nil || !strings.Contains(err.Error(), "unacknowledged") {
		t.Errorf("acknowledging a number in a taken slot: %v, want an error", err)
	}
	if c.Last() != -1 {
		t.Errorf("Last = %d, want -1 (0 is unacknowledged)", c.Last())
	}
}

// Workers acknowledging at once: Last never passes a number handed out
// and unacknowledged; YCSB's tryLock may leave it behind until the next
// acknowledgement, which then collects every number done.
func TestAckCounterConcurrent(t *testing.T) {
	const workers, each = 8, 20_000
	c := NewAckCounter(0)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			prev := int64(-1)
			for range each {
				k := c.Next()
				if last := c.Last(); last >= k || last < prev {
					t.Errorf("Last %d with %d unacknowledged (previously %d)", last, k, prev)
					return
				}
				if err := c.Acknowledge(k); err != nil {
					t.Error(err)
					return
				}
				prev = c.Last()
			}
		})
	}
	wg.Wait()
	k := c.Next()
	if err := c.Acknowledge(k); err != nil {
		t.Fatal(err)
	}
	if c.Last() != workers*each {
		t.Errorf("Last = %d after %d numbers all acknowledged, want %d", c.Last(), workers*each+1, workers*each)
	}
}
