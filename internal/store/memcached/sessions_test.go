package memcached

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, server.Memcached, server.Options{}).URL
	storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, url) }, storetest.SessionOptions{})
}

// TestSessionsEvicted: with memory below the working set, memcached evicts
// live sessions, and the store's observation counts the evictions the
// workload reports as lost sessions.
func TestSessionsEvicted(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, server.Memcached, server.Options{Settings: map[string]string{"memory_mb": "2"}}).URL
	s := open(t, url)
	ctx := context.Background()
	h, err := s.OpenSessions(ctx, store.SessionDesign{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"pad":"` + strings.Repeat("x", 240) + `"}`)
	const n = 20000 // ~6 MB of items in 2 MB
	for id := int64(1); id <= n; id++ {
		if _, err := h.Create(ctx, id, payload); err != nil {
			t.Fatal(err)
		}
	}
	o, err := h.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o.Metrics["evictions"] == 0 {
		t.Fatalf("no evictions: %v", o.Metrics)
	}
	if _, ok, err := h.Read(ctx, 1, nil); err != nil || ok {
		t.Errorf("the first, live session: readable %v, %v; want evicted", ok, err)
	}
	if got, ok, err := h.Read(ctx, n, nil); err != nil || !ok || string(got) != string(payload) {
		t.Errorf("the last session: %v, %v", ok, err)
	}
}
