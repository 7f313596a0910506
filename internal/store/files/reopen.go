package files

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/storebench/storebench/internal/store"
)

// Attached is a Store opened on a namespace that another Store created (in
// this process or another one), without emptying it: the durability
// workload's writer process uses it, and so does whoever reads the keys back
// after a crash. It never removes anything: Close releases its descriptors
// and leaves the namespace to its creator, and Reset refuses.
type Attached struct {
	*Store
}

var _ store.Store = (*Attached)(nil)

// errAttached is returned by Attached.Reset.
var errAttached = errors.New("files: an attached store does not reset the namespace it did not create")

// Attach opens the existing namespace Dir/<Namespace>, which must carry the
// marker and its subdirectories, and keeps every key in it. It fails with
// store.ErrNotOwned when the marker is missing.
func Attach(_ context.Context, cfg Config) (*Attached, error) {
	s, err := newStore(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkMarker(s.dir); err != nil {
		return nil, fmt.Errorf("files: attach %s: %w", s.dir, errors.Join(err, store.ErrNotOwned))
	}
	if err := s.openSubs(false, "attach: "); err != nil {
		return nil, err
	}
	return &Attached{Store: s}, nil
}

// Reset refuses: the namespace belongs to the store that created it.
func (a *Attached) Reset(context.Context) error { return errAttached }

// Close releases the directory descriptors (the last open client does it if
// clients are still open) and keeps every file. Closing twice is not an error.
func (a *Attached) Close(context.Context) error {
	s := a.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	if s.clients == 0 {
		s.closeFDs()
	}
	return nil
}

// ConfigOf is the Config of the store info describes (its Info: location,
// namespace and fsync setting), for another process to attach to it.
func ConfigOf(info store.Info) (Config, error) {
	if info.Location == "" || info.Namespace == "" {
		return Config{}, errors.New("files: the store reported no location or namespace")
	}
	fsync, noDir, err := ParseFsync(info.Settings["fsync"])
	if err != nil {
		return Config{}, fmt.Errorf("files: the store reported %w", err)
	}
	return Config{Dir: filepath.Dir(info.Location), Namespace: info.Namespace, Fsync: fsync, NoDirFsync: noDir}, nil
}

// Create creates the namespace cfg describes, as New does, and lets go of
// it, keeping it for Attach.
func Create(ctx context.Context, cfg Config) error {
	st, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	return (&Attached{Store: st}).Close(ctx)
}
