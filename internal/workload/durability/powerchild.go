package durability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/powercut"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/store"
)

// childPowerCrasher plays a power cut under files or SQLite, whose writes
// run in a writer child. The store cannot move under the parent's open
// handle, so the cell gets a namespace of its own, made by the same
// settings, on a powercut mount in a directory of its own beside the
// store's: base/mnt serves base/durable. A trial's child writes through the
// mount; the cut kills it, discards what no fsync made durable, and
// remounts; the parent then attaches a store of its own to what survived
// (SQLite recovers its journal or WAL there) and reads back through it.
type childPowerCrasher struct {
	childCrasher
	base   string // removed, mount and all, by close
	fs     *powercut.FS
	reader store.Store // attached after the last cut; nil before
	cuts   schema.Cuts
}

func newChildPowerCrasher(ctx context.Context, spec *childSpec, argv []string) (_ *childPowerCrasher, err error) {
	base, err := owner.MakeDir(spec.parentDir(), ".powercut-*", "durability power cut")
	if err != nil {
		return nil, fmt.Errorf("durability: %w", err)
	}
	c := &childPowerCrasher{childCrasher: childCrasher{spec: spec, argv: argv}, base: base}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	backing, mnt := filepath.Join(base, "durable"), filepath.Join(base, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("durability: %w", err)
		}
	}
	if c.fs, err = powercut.Mount(ctx, backing, mnt); err != nil {
		return nil, fmt.Errorf("durability: %w", err)
	}
	spec.moveTo(mnt)
	if err := spec.create(ctx); err != nil {
		return nil, fmt.Errorf("durability: create the store on the power-cut filesystem: %w", err)
	}
	// The namespace's creation is old news by the first trial: durable.
	return c, c.syncAll()
}

// parentDir is the directory the store's namespace lives in: its
// location's (files: the namespace's directory; SQLite: the database file).
func (s *childSpec) parentDir() string { return filepath.Dir(s.Info.Location) }

// moveTo points the spec at dir instead of its store's own directory.
func (s *childSpec) moveTo(dir string) {
	s.Info.Location = filepath.Join(dir, filepath.Base(s.Info.Location))
}

// create makes the spec's namespace and lets go of it, keeping it: the
// child and the readers attach to it, and close removes it with the mount.
func (s *childSpec) create(ctx context.Context) error {
	return s.reattach.Create(ctx, s.Info)
}

// clients lets go of the last trial's reader, whose files the next cut
// takes away, before the child starts writing.
func (c *childPowerCrasher) clients(ctx context.Context, n int) ([]store.KV, func(), error) {
	if err := c.closeReader(); err != nil {
		return nil, nil, err
	}
	return c.childCrasher.clients(ctx, n)
}

// restart cuts the power under the killed writer, remounts what survived
// and attaches the reader to it; its attach (SQLite's recovery) is the
// restart's time.
func (c *childPowerCrasher) restart(ctx context.Context) (time.Duration, error) {
	if err := cutAndRemount(ctx, c.fs, &c.cuts); err != nil {
		return 0, err
	}
	t0 := time.Now()
	var err error
	if c.reader, err = c.spec.attach(ctx); err != nil {
		return time.Since(t0), &notRecovered{fmt.Errorf("durability: reopen the store after the cut: %w", err)}
	}
	return time.Since(t0), nil
}

func (c *childPowerCrasher) readStore() store.Store { return c.reader }

// mountStore attaches a store of this process to the mount: the plain
// side's writes are this process's too.
func (c *childPowerCrasher) mountStore(ctx context.Context) (store.Store, func(), error) {
	st, err := c.spec.attach(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { _ = st.Close(context.Background()) }, nil
}

func (c *childPowerCrasher) syncAll() error { return c.fs.SyncAll() }

func (c *childPowerCrasher) cutsSoFar() *schema.Cuts { return &c.cuts }

func (c *childPowerCrasher) crash() string {
	return "a power cut: SIGKILL of the writer process (a child of storebench that has the " + c.spec.Store +
		" store open on storebench's power-cut filesystem), then every write and name change that no fsync had made durable discarded, then the store reopened by storebench on what survived"
}

func (c *childPowerCrasher) closeReader() error {
	if c.reader == nil {
		return nil
	}
	err := c.reader.Close(context.Background())
	c.reader = nil
	return err
}

// close ends the child, the reader and the mount, and removes the
// directory with the cell's namespace in it.
func (c *childPowerCrasher) close() {
	c.childCrasher.close()
	_ = c.closeReader()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c.fs != nil {
		if err := c.fs.Unmount(ctx); err != nil {
			return // a directory still mounted is not removed: CleanStale's to find
		}
		c.fs = nil
	}
	_ = os.RemoveAll(c.base)
}

// addCut sums one cut's report into c.
func addCut(c *schema.Cuts, rep powercut.CutReport) {
	c.Cuts++
	c.FilesRolledBack += int64(rep.FilesRolledBack)
	c.BytesDiscarded += rep.BytesDiscarded
	c.NamesUndone += int64(rep.NamesUndone)
	c.WritesRefused += rep.WritesRefused
}
