package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/storebench/storebench/internal/store"
)

// Namespaces are a store's functions for what runs leave behind: a killed
// run's namespace, or one kept on purpose (run --keep), which storebench
// clean lists and drops.
type Namespaces struct {
	// New opens a store in namespace ns.
	New func(ctx context.Context, ns string) (store.Store, error)
	// List lists the namespaces that carry storebench's mark in the backend.
	List func(ctx context.Context) ([]string, error)
	// Drop removes namespace ns, only if it carries the mark.
	Drop func(ctx context.Context, ns string) error
	// Unmarked makes something in the backend named after ns without
	// storebench's mark (a schema without the comment, keys outside the
	// prefix, a directory without the marker file), and returns a check
	// that fails t if it was changed or removed.
	Unmarked func(t *testing.T, ns string) (check func(t *testing.T))
}

// RunNamespaces checks that a detached store's namespace stays, is listed,
// and is dropped with nothing else; and that what lacks the mark is neither
// listed nor dropped.
func RunNamespaces(t *testing.T, n Namespaces) {
	listed := func(t *testing.T, ns string) bool {
		t.Helper()
		names, err := n.List(ctxT(t))
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return slices.Contains(names, ns)
	}
	t.Run("DetachKeepsDropRemoves", func(t *testing.T) {
		kept, other := Namespace(t), Namespace(t)
		for _, ns := range []string{kept, other} {
			s, err := n.New(ctxT(t), ns)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			mustSet(t, KVClient(t, s), []byte("k"), []byte("v"), 0)
			if err := mustImplement[store.Detacher](t, s).Detach(ctxT(t)); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			if err := s.Close(ctxT(t)); err != nil {
				t.Fatalf("Close after Detach: %v", err)
			}
			if !listed(t, ns) {
				t.Fatalf("namespace %s: not listed after Detach (and a Close)", ns)
			}
		}
		for range 2 { // dropping what is gone already is not an error
			if err := n.Drop(ctxT(t), kept); err != nil {
				t.Fatalf("Drop(%s): %v", kept, err)
			}
		}
		if listed(t, kept) {
			t.Errorf("namespace %s: still listed after Drop", kept)
		}
		if !listed(t, other) {
			t.Errorf("namespace %s: gone with the Drop of %s", other, kept)
		}
		if err := n.Drop(ctxT(t), other); err != nil {
			t.Fatalf("Drop(%s): %v", other, err)
		}
	})
	t.Run("UnmarkedLeftAlone", func(t *testing.T) {
		ns := Namespace(t)
		check := n.Unmarked(t, ns)
		if listed(t, ns) {
			t.Errorf("unmarked %s listed as storebench's", ns)
		}
		if err := n.Drop(ctxT(t), ns); err != nil && !errors.Is(err, store.ErrNotOwned) {
			t.Errorf("Drop(unmarked %s) = %v, want nil or store.ErrNotOwned", ns, err)
		}
		check(t)
	})
}

// Kept opens a store in a fresh namespace with newStore and detaches it,
// as a run with --keep leaves it, and returns the namespace.
func Kept(t *testing.T, newStore func(ctx context.Context, ns string) (store.Store, error)) string {
	t.Helper()
	ns := Namespace(t)
	s, err := newStore(ctxT(t), ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := mustImplement[store.Detacher](t, s).Detach(ctxT(t)); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	return ns
}
