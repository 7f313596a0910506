package files

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

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
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Join(cfg.Dir, cfg.Namespace))
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	if err := checkMarker(dir); err != nil {
		return nil, fmt.Errorf("files: attach %s: %w", dir, errors.Join(err, store.ErrNotOwned))
	}
	s := &Store{cfg: cfg, dir: dir}
	for i := range s.subs {
		s.subs[i] = -1
	}
	for i := range s.subs {
		name := filepath.Join(dir, hex.EncodeToString([]byte{byte(i)}))
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			s.closeFDs()
			return nil, fmt.Errorf("files: attach: open %s: %w", name, err)
		}
		s.subs[i] = fd
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
