package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ValidNamespace accepts the names storebench generates: [a-z0-9_], starting
// with a letter, short enough to prefix SQL identifiers and cache keys.
func ValidNamespace(ns string) error {
	bad := errors.New("namespace " + strconv.Quote(ns) + ": want 1-48 characters of [a-z0-9_] starting with a letter")
	if ns == "" || len(ns) > 48 || ns[0] < 'a' || ns[0] > 'z' {
		return bad
	}
	for i := 0; i < len(ns); i++ {
		if c := ns[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return bad
		}
	}
	return nil
}

// ListNamespace stands in for a namespace while a store lists the
// namespaces of a server: its constructor wants one, and the listing
// neither creates nor drops it.
const ListNamespace = "list"

// Detacher is the optional capability of closing a store while leaving its
// data in place (storebench run --keep): its namespace stays for anyone to
// inspect, until storebench clean removes it.
type Detacher interface {
	// Detach releases the store's own resources like Close, and removes nothing.
	Detach(ctx context.Context) error
}

// SortedNames are the names a listing collected in set, sorted (an empty
// slice, not nil, for none).
func SortedNames(set map[string]bool) []string {
	return append([]string{}, slices.Sorted(maps.Keys(set))...)
}

// RequireOwned is a server store's check before it touches its namespace
// for op: the namespace (what, e.g. "database `sb_x`") must exist and carry
// storebench's marker (marker says what it lacks otherwise, e.g. "\"storebench\"
// comment"); exists, owned and err are what the store found.
func RequireOwned(name, op, what, marker string, exists, owned bool, err error) error {
	switch {
	case err != nil:
		return err
	case !exists:
		return fmt.Errorf("%s: %s: %s does not exist", name, op, what)
	case !owned:
		return fmt.Errorf("%s: %s: %s has no %s: %w", name, op, what, marker, ErrNotOwned)
	}
	return nil
}

// DropOwned is a server store's DropNamespace once it has looked at the
// namespace (what, e.g. "schema sb_x"): a namespace that is not there is
// not an error (nothing is left to drop), one without storebench's marker
// is refused with ErrNotOwned, and drop removes an owned one.
func DropOwned(name, what, marker string, exists, owned bool, err error, drop func() error) error {
	switch {
	case err != nil:
		return err
	case !exists:
		return nil
	case !owned:
		return fmt.Errorf("%s: %s has no %s: %w", name, what, marker, ErrNotOwned)
	}
	return drop()
}

// DependentsError says that objects outside a namespace depend on objects
// in it (a user's view on a kept run's table, a foreign key from another
// schema or database): dropping the namespace would remove or break them,
// so it is left in place. Nothing outside what a run made is ever touched.
type DependentsError struct {
	Name string // the store's name, which starts the message
	What string // the namespace, e.g. "schema \"sb_x\""
	// Dependents are the objects outside, kind and qualified name each,
	// e.g. "view public.v".
	Dependents []string
	// Hint says how to remove the namespace deliberately, by hand.
	Hint string
}

func (e *DependentsError) Error() string {
	return fmt.Sprintf("%s: %s left in place: %s; %s", e.Name, e.What, e.Reason(), e.Hint)
}

// Reason names the dependents, in one line.
func (e *DependentsError) Reason() string {
	return "objects outside it depend on it: " + strings.Join(e.Dependents, ", ")
}

// OwnedNamespace is the lifecycle the server SQL stores share around the
// namespace they create and mark as storebench's own (a MySQL database, a
// PostgreSQL schema): Reset empties it, Close drops it and disconnects,
// Detach only disconnects, Drop removes a leftover one; each touches the
// namespace only while it carries the marker, and Close and Drop leave it
// (a *DependentsError) while objects outside it depend on it. Mu and Closed are the store's
// own lock on its administrative connection and its closed flag, which the
// store's other administrative methods take too.
type OwnedNamespace struct {
	Kind      string // the store's name, which starts every error
	Noun      string // what the namespace is: "database", "schema"
	Quoted    string // its quoted identifier
	Marker    string // what marks it as storebench's own, as a refusal says it lacks
	ResetSQL  string // empties it
	Mu        *sync.Mutex
	Closed    *bool
	ErrClosed error // what the methods of a closed store return

	// Owned reports whether the namespace exists and carries the marker.
	Owned func(ctx context.Context) (exists, owned bool, err error)
	// DropAll removes it with everything in it and nothing outside it: a
	// *DependentsError, and nothing dropped, when something outside depends
	// on it. Its errors are the store's own, ready to return.
	DropAll func(ctx context.Context) error
	// Exec runs one statement on the administrative connection.
	Exec func(ctx context.Context, query string) error
	// Disconnect closes the administrative connection.
	Disconnect func(ctx context.Context) error
	// OpErr wraps an error of op as the store's OpError, classified.
	OpErr func(op string, err error) error
}

func (n *OwnedNamespace) what() string { return n.Noun + " " + n.Quoted }

// CheckOwned refuses to go on unless the store is open and its namespace
// carries the marker. The caller holds Mu.
func (n *OwnedNamespace) CheckOwned(ctx context.Context, op string) error {
	if *n.Closed {
		return n.ErrClosed
	}
	return n.refuseUnowned(ctx, op)
}

// Check is CheckOwned under Mu, for work that goes on without the lock
// (on a connection of its own).
func (n *OwnedNamespace) Check(ctx context.Context, op string) error {
	n.Mu.Lock()
	defer n.Mu.Unlock()
	return n.CheckOwned(ctx, op)
}

// refuseUnowned is CheckOwned on a store that may be closing.
func (n *OwnedNamespace) refuseUnowned(ctx context.Context, op string) error {
	exists, owned, err := n.Owned(ctx)
	return RequireOwned(n.Kind, op, n.what(), n.Marker, exists, owned, err)
}

// Reset empties the namespace, after checking its marker.
func (n *OwnedNamespace) Reset(ctx context.Context) error {
	n.Mu.Lock()
	defer n.Mu.Unlock()
	if err := n.CheckOwned(ctx, "reset"); err != nil {
		return err
	}
	if err := n.Exec(ctx, n.ResetSQL); err != nil {
		return n.OpErr("reset", err)
	}
	return nil
}

// Close drops the namespace, only if it carries the marker, and
// disconnects. Closing twice is not an error.
func (n *OwnedNamespace) Close(ctx context.Context) error {
	return EndOnce(n.Mu, n.Closed, func() error {
		err := n.refuseUnowned(ctx, "close")
		if err == nil {
			err = n.DropAll(ctx)
		}
		if e := n.Disconnect(ctx); err == nil && e != nil {
			err = n.OpErr("close", e)
		}
		return err
	})
}

// Detach disconnects and leaves the namespace in place.
func (n *OwnedNamespace) Detach(ctx context.Context) error {
	return EndOnce(n.Mu, n.Closed, func() error {
		if err := n.Disconnect(ctx); err != nil {
			return n.OpErr("detach", err)
		}
		return nil
	})
}

// Drop is DropNamespace on a store connected for it: it drops the namespace
// only if it carries the marker (ErrNotOwned otherwise); one that is not
// there is not an error.
func (n *OwnedNamespace) Drop(ctx context.Context) error {
	exists, owned, err := n.Owned(ctx)
	return DropOwned(n.Kind, n.what(), n.Marker, exists, owned, err, func() error { return n.DropAll(ctx) })
}
