package tick

import (
	"context"
	"testing"
	"time"
)

// Every stops when its context is done, and never calls fn after that,
// even when fn itself cancels and a tick is already waiting.
func TestEveryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			calls++
			if calls == 3 {
				cancel()
				// Let the ticker fill its channel: the next select has both
				// cases ready.
				time.Sleep(5 * time.Millisecond)
			}
		})
	}()
	<-done
	if calls != 3 {
		t.Fatalf("fn ran %d times, want 3 (never after its context was done)", calls)
	}
}

// Every returns at once for a context already done, without calling fn.
func TestEveryDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Every(ctx, time.Nanosecond, func() { t.Fatal("fn called on a done context") })
}
