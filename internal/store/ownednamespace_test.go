package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// ownedFixture is an OwnedNamespace whose administrative connection is a
// log of the statements it was given, over a namespace whose existence and
// marker the test sets.
type ownedFixture struct {
	mu             sync.Mutex
	closed         bool
	exists, marked bool
	log            []string
	ns             OwnedNamespace
}

func newOwnedFixture(exists, marked bool) *ownedFixture {
	f := &ownedFixture{exists: exists, marked: marked}
	f.ns = OwnedNamespace{
		Kind: "sql", Noun: "schema", Quoted: `"sb_x"`, Marker: `"storebench" comment`,
		ResetSQL: "TRUNCATE",
		DropAll: func(context.Context) error {
			f.log = append(f.log, "DROP")
			return nil
		},
		Mu: &f.mu, Closed: &f.closed, ErrClosed: errors.New("sql: store is closed"),
		Owned: func(context.Context) (bool, bool, error) { return f.exists, f.exists && f.marked, nil },
		Exec: func(_ context.Context, q string) error {
			f.log = append(f.log, q)
			return nil
		},
		Disconnect: func(context.Context) error {
			f.log = append(f.log, "disconnect")
			return nil
		},
		OpErr: func(op string, err error) error { return errors.New(op + ": " + err.Error()) },
	}
	return f
}

// The lifecycle touches the namespace only while it carries the marker,
// disconnects exactly once whatever it found, and refuses work once closed.
func TestOwnedNamespace(t *testing.T) {
	ctx := context.Background()
	t.Run("owned", func(t *testing.T) {
		f := newOwnedFixture(true, true)
		if err := f.ns.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.ns.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.ns.Close(ctx); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if got := strings.Join(f.log, ","); got != "TRUNCATE,DROP,disconnect" {
			t.Errorf("statements %s", got)
		}
		if err := f.ns.Reset(ctx); err == nil || err.Error() != "sql: store is closed" {
			t.Errorf("Reset after Close: %v", err)
		}
	})
	t.Run("not marked", func(t *testing.T) {
		f := newOwnedFixture(true, false)
		if err := f.ns.Reset(ctx); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Reset: %v, want ErrNotOwned", err)
		}
		if err := f.ns.Drop(ctx); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Drop: %v, want ErrNotOwned", err)
		}
		err := f.ns.Close(ctx)
		if !errors.Is(err, ErrNotOwned) || err.Error() != `sql: close: schema "sb_x" has no "storebench" comment: `+ErrNotOwned.Error() {
			t.Errorf("Close: %v", err)
		}
		if got := strings.Join(f.log, ","); got != "disconnect" {
			t.Errorf("statements %s, want only the disconnect", got)
		}
	})
	t.Run("gone", func(t *testing.T) {
		f := newOwnedFixture(false, false)
		if err := f.ns.Drop(ctx); err != nil {
			t.Errorf("Drop of a missing namespace: %v", err)
		}
		if err := f.ns.Detach(ctx); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(f.log, ","); got != "disconnect" {
			t.Errorf("statements %s", got)
		}
	})
}
