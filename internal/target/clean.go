package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/store"
)

// Leftover is something a storebench run made and did not remove, because
// it was killed or kept its data on purpose: a directory (the run's scratch
// dir, a managed server's data or socket dir) or a namespace in a store
// named by URL. Only what carries storebench's mark is ever a Leftover.
type Leftover struct {
	// What it is and where, e.g. "postgres data dir /tmp/storebench-postgres-1"
	// or `schema sb_… at postgres://me:xxxxx@db/app` (passwords redacted).
	What string
	// Made is when, as far as known (zero: unknown).
	Made time.Time
	// Owner is whether the run that made it still runs, and Why.
	Owner owner.State
	Why   string
	// Bytes is a directory's size; 0 for a namespace.
	Bytes int64
	// Dir is the directory, "" for a namespace.
	Dir string

	remove     func(ctx context.Context) error
	dependents func(ctx context.Context) error
}

// Remove removes the leftover; what lost its mark meanwhile is left, and
// so is a namespace that objects outside it depend on (a
// *store.DependentsError).
func (l Leftover) Remove(ctx context.Context) error { return l.remove(ctx) }

// Dependents returns a *store.DependentsError when objects outside the
// leftover (a namespace) depend on it, so that Remove would leave it: what
// a dry run says of it.
func (l Leftover) Dependents(ctx context.Context) error {
	if l.dependents == nil {
		return nil
	}
	return l.dependents(ctx)
}

// Stale reports whether the leftover may be removed: its run is gone, or,
// when nothing here can tell (another host, an older storebench), it was
// made longer than olderThan ago (olderThan > 0).
func (l Leftover) Stale(olderThan time.Duration) bool {
	switch l.Owner {
	case owner.Dead:
		return true
	case owner.Unknown:
		return olderThan > 0 && !l.Made.IsZero() && time.Since(l.Made) > olderThan
	}
	return false
}

// DirPatterns are the names of the directories runs make: os.MkdirTemp
// patterns under --data-dir (or the temp dir), and the socket dirs a
// managed server gets in /tmp when its data dir's path is too long.
var DirPatterns = []string{"storebench-*", "sb-sock-*"}

// LocalLeftovers lists the directories storebench runs made in dirs, by
// their owner markers. It returns separately the paths of directories
// named like them that carry no marker (made by a storebench before
// markers, or not storebench's): those are never removed.
func LocalLeftovers(dirs ...string) (found []Leftover, unmarked []string, err error) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		for _, pattern := range DirPatterns {
			paths, err := filepath.Glob(filepath.Join(dir, pattern))
			if err != nil {
				return nil, nil, err
			}
			for _, p := range paths {
				if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || seen[p] {
					continue
				}
				seen[p] = true
				m, err := owner.ReadMarker(p)
				if errors.Is(err, owner.ErrNoMarker) {
					unmarked = append(unmarked, p)
					continue
				}
				if err != nil {
					return nil, nil, err
				}
				state, why := m.State()
				l := Leftover{What: m.What + " " + p, Made: m.Made, Owner: state, Why: why, Dir: p,
					remove: func(context.Context) error { return removeMarkedDir(p) }}
				if state != owner.Alive { // a live run's dirs are not walked under its feet
					l.Bytes = dirSize(p)
				}
				found = append(found, l)
			}
		}
	}
	return found, unmarked, nil
}

// removeMarkedDir removes dir if it still carries a marker of a process that
// is gone: a run that started meanwhile cannot have reused its name
// (os.MkdirTemp), but the check costs nothing.
func removeMarkedDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	m, err := owner.ReadMarker(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if st, why := m.State(); st == owner.Alive {
		return fmt.Errorf("%s: its run is running again (%s)", dir, why)
	}
	return os.RemoveAll(dir)
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// ErrCannotList means a kind of store cannot list what runs left in it.
var ErrCannotList = errors.New("cannot list what storebench runs left")

// Leftovers lists the namespaces that carry storebench's mark in the store
// spec names by URL.
func (r Registry) Leftovers(ctx context.Context, spec Spec) ([]Leftover, error) {
	k, ok := r.Lookup(spec.Store)
	if !ok {
		return nil, fmt.Errorf("unknown store %q", spec.Store)
	}
	if spec.Managed() {
		return nil, fmt.Errorf("%s: not a URL: a managed server's data goes with its data dir", spec.Label())
	}
	if k.Namespaces == nil {
		return nil, fmt.Errorf("%s: %w", store.RedactURL(spec.URL), ErrCannotList)
	}
	a := OpenArgs{URL: spec.URL, Options: spec.Options}
	names, err := k.Namespaces(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", store.RedactURL(spec.URL), store.RedactURL(err.Error()))
	}
	var found []Leftover
	for _, ns := range names {
		l := Leftover{What: fmt.Sprintf(k.Namespace, ns) + " at " + store.RedactURL(spec.URL)}
		if o, ok := owner.ParseNamespace(ns); ok {
			l.Made = o.Made
			l.Owner, l.Why = o.State()
		} else {
			l.Owner, l.Why = owner.Unknown, "not named like a run's namespace"
		}
		a := a
		a.Namespace = ns
		l.remove = func(ctx context.Context) error {
			// The owner is checked again just before: the state listed may be old.
			if o, ok := owner.ParseNamespace(ns); ok {
				if st, why := o.State(); st == owner.Alive {
					return fmt.Errorf("%s: its run is running (%s)", l.What, why)
				}
			}
			return redactedErr(l.What, k.DropNamespace(ctx, a))
		}
		if k.Dependents != nil {
			l.dependents = func(ctx context.Context) error { return redactedErr(l.What, k.Dependents(ctx, a)) }
		}
		found = append(found, l)
	}
	return found, nil
}

// redactedErr is err of what with any password in it redacted; a
// *store.DependentsError stays one (it names objects, never the URL).
func redactedErr(what string, err error) error {
	if _, ok := errors.AsType[*store.DependentsError](err); ok || err == nil {
		return err
	}
	return fmt.Errorf("%s: %s", what, store.RedactURL(err.Error()))
}
