package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// Attached is a Store opened on a namespace table that another Store
// created (in this process or another one), without emptying it: the
// durability workload's writer process uses it, and so does whoever reads
// the keys back after a crash. It never drops anything: Close closes its
// connections and leaves the table and the file to their creator, and Reset
// refuses.
type Attached struct {
	*Store
}

var _ store.Store = (*Attached)(nil)

// errAttached is returned by Attached.Reset.
var errAttached = errors.New("sqlite: an attached store does not reset the table it did not create")

// Attach opens the existing database file and the namespace's table, which
// must be recorded in storebench_owned (else store.ErrNotOwned), with the
// configured journal mode and synchronous setting, and keeps every row. The
// first connection recovers the file after a crash (hot journal rollback or
// WAL replay), as SQLite always does.
func Attach(ctx context.Context, cfg Config) (*Attached, error) {
	s, err := newStore(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.cfg.Path); err != nil {
		return nil, fmt.Errorf("sqlite: attach: %w", err)
	}
	if err := s.openDB(); err != nil {
		return nil, err
	}
	exists, owned, err := s.state(ctx, s.db)
	if err == nil && (!exists || !owned) {
		err = fmt.Errorf("sqlite: attach: table %s is not a storebench table of this file (exists %v, recorded %v): %w", s.table, exists, owned, store.ErrNotOwned)
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	return &Attached{Store: s}, nil
}

// Reset refuses: the table belongs to the store that created it.
func (a *Attached) Reset(context.Context) error { return errAttached }

// Close closes the database handle and keeps the table and the file.
// Closing twice is not an error.
func (a *Attached) Close(ctx context.Context) error { return a.Store.Detach(ctx) }

// ConfigOf is the Config of the store info describes (its Info: location,
// namespace, journal mode, synchronous and busy timeout), for another
// process to attach to it.
func ConfigOf(info store.Info) (Config, error) {
	if info.Location == "" || info.Namespace == "" {
		return Config{}, errors.New("sqlite: the store reported no location or namespace")
	}
	c := Config{Path: info.Location, Namespace: info.Namespace,
		JournalMode: info.Settings["journal_mode"], Synchronous: info.Settings["synchronous"]}
	if ms, err := strconv.ParseInt(info.Settings["busy_timeout"], 10, 64); err == nil && ms > 0 {
		c.BusyTimeout = time.Duration(ms) * time.Millisecond
	}
	return c, nil
}

// Create creates the namespace cfg describes, as New does, and lets go of
// it, keeping it for Attach.
func Create(ctx context.Context, cfg Config) error {
	st, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	return st.Detach(ctx)
}
