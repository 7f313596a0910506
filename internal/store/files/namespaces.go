package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/storebench/storebench/internal/store"
)

// What a run leaves behind when it cannot close its store (it was killed)
// or keeps its data on purpose (run --keep): its namespace directory,
// marked by the Marker file. storebench clean lists and removes such
// directories; it never touches one without the marker.

var _ store.Detacher = (*Store)(nil)

// Detach closes the store and leaves its directory and files in place.
func (s *Store) Detach(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.release()
	return nil
}

// Namespaces lists the subdirectories of dir that carry the Marker, by name.
func Namespaces(_ context.Context, dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("files: list namespaces: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && store.ValidNamespace(e.Name()) == nil && checkMarker(filepath.Join(dir, e.Name())) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// DropNamespace removes dir/ns with everything in it, only if it carries
// the Marker (store.ErrNotOwned otherwise). A directory that is not there
// is not an error: nothing is left to remove.
func DropNamespace(_ context.Context, dir, ns string) error {
	if err := store.ValidNamespace(ns); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	p := filepath.Join(dir, ns)
	if !dirExists(p) {
		return nil
	}
	if err := checkMarker(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return fmt.Errorf("files: %s has no %s: %w", p, Marker, errors.Join(err, store.ErrNotOwned))
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("files: drop %s: %w", p, err)
	}
	return nil
}
