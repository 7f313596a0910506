package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
