package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memory"
)

// OpenChecked returns the handle's failed check before opening anything,
// the store's own client otherwise, and an error, not a panic, when the
// client is not of the type asked for.
func TestOpenChecked(t *testing.T) {
	ctx := context.Background()
	s, err := memory.New(ctx, memory.Config{Namespace: "sb_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	bad := errors.New("sessions: TTL must be at least 1 s")
	if c, err := store.OpenChecked[*memory.Client](ctx, s, bad); err != bad || c != nil {
		t.Errorf("failed check: %v, %v; want the check's error and no client", c, err)
	}
	c, err := store.OpenChecked[*memory.Client](ctx, s, nil)
	if err != nil || c == nil {
		t.Fatalf("OpenChecked = %v, %v", c, err)
	}
	c.Close()
	type otherClient struct{ store.Client }
	if _, err := store.OpenChecked[*otherClient](ctx, s, nil); err == nil || !strings.Contains(err.Error(), "not a *store_test.otherClient") {
		t.Errorf("wrong client type: %v", err)
	}
	s.Close(ctx)
	if _, err := store.OpenChecked[*memory.Client](ctx, s, nil); err == nil {
		t.Error("a closed store opened a client")
	}
}
