package files

import (
	"context"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	dir := t.TempDir()
	for _, sync := range []string{SyncNone, SyncDir} {
		t.Run(sync, func(t *testing.T) {
			t.Parallel()
			storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, dir, false) },
				storetest.SessionOptions{Design: store.SessionDesign{FileSync: sync}})
		})
	}
}

// TestSessionsReaperResumes: a capped reap walk removes at most its batch
// per call and the next call goes on where the last one stopped, so the
// expired files go in a few calls; kv files are never touched.
func TestSessionsReaperResumes(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), false)
	ctx := context.Background()
	c, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.(store.KV).Set(ctx, []byte("kv-key"), []byte("kv"), 0); err != nil {
		t.Fatal(err)
	}
	h, err := s.OpenSessions(ctx, store.SessionDesign{TTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for id := int64(1); id <= 1000; id++ {
		if _, err := h.Create(ctx, id, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	var total int64
	for calls := 1; total < 1000; calls++ {
		n, err := h.Reap(ctx, 300)
		if err != nil {
			t.Fatal(err)
		}
		if n > 300 || calls > 4 {
			t.Fatalf("call %d reaped %d (total %d)", calls, n, total)
		}
		total += n
	}
	o, err := h.Observe(ctx)
	if err != nil || o.Rows != 0 {
		t.Errorf("after reaping: %+v, %v", o, err)
	}
	if v, ok, err := c.(store.KV).Get(ctx, []byte("kv-key"), nil); err != nil || !ok || string(v) != "kv" {
		t.Errorf("kv file after reaping sessions: %q %v %v", v, ok, err)
	}
	if _, err := h.Create(ctx, 5, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Create(ctx, 5, []byte(`{}`)); err == nil {
		t.Error("a second create of the same id replaced the first")
	}
}
