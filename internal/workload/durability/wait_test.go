package durability

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The controller's waits end on what they wait for, on their time, and
// early when the trial aborts or the load ends: a wait for the kill's
// delay must not outlive an aborted trial.
func TestTrialWait(t *testing.T) {
	const long = time.Minute
	newTrial := func() *trial { return &trial{reached: make(chan struct{}), aborted: make(chan struct{})} }

	tr := newTrial()
	close(tr.reached)
	if got := tr.wait(context.Background(), tr.reached, long); got != waitReady {
		t.Errorf("reached: got %v, want waitReady", got)
	}
	if got := newTrial().wait(context.Background(), nil, time.Millisecond); got != waitTimer {
		t.Errorf("a wait for the time alone: got %v, want waitTimer", got)
	}
	tr = newTrial()
	tr.abort(errors.New("writer failed"))
	if got := tr.wait(context.Background(), nil, long); got != waitStopped {
		t.Errorf("aborted trial: got %v, want waitStopped", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr = newTrial()
	if got := tr.wait(ctx, tr.reached, long); got != waitStopped {
		t.Errorf("load ended: got %v, want waitStopped", got)
	}
}
