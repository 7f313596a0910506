package store

import (
	"context"
	"testing"
	"time"
)

func TestSharedContext(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, done, err := SharedContext(parent, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	cancel()
	if ctx.Err() != nil {
		t.Error("cancelling the caller's context cancelled the shared query's")
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > time.Minute {
		t.Errorf("deadline %v, %v: want within the limit", dl, ok)
	}

	short, cancelShort := context.WithTimeout(context.Background(), time.Second)
	defer cancelShort()
	ctx2, done2, err := SharedContext(short, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer done2()
	if dl, _ := ctx2.Deadline(); time.Until(dl) > time.Second {
		t.Errorf("deadline %v: the caller's earlier deadline was not kept", dl)
	}

	if _, _, err := SharedContext(parent, time.Minute); err == nil {
		t.Error("an already cancelled context was accepted")
	}
}
