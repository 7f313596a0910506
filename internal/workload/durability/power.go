package durability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/storebench/storebench/internal/powercut"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Faults a durability cell can play.
const (
	FaultKill  = "kill"  // SIGKILL of the server: the OS page cache survives
	FaultPower = "power" // a power cut: what no fsync made durable is lost
)

// powerCrasher plays a power cut on a managed server: its data dir is
// served by a powercut filesystem mounted over it, and a crash is SIGKILL,
// then the cut (every write and name change no fsync made durable is
// discarded), then a restart on what survived.
//
// The server's data dir D keeps its path: the server is shut down cleanly,
// D is renamed to D.durable (the backing directory) and the filesystem is
// mounted at D, so the server finds its files where it left them. close
// undoes that.
type powerCrasher struct {
	serverCrasher
	fs      *powercut.FS
	dir     string // the server's data dir, the mountpoint
	backing string
	cuts    schema.Cuts
}

func newPowerCrasher(ctx context.Context, st store.Store, srv workload.Server) (*powerCrasher, error) {
	c := &powerCrasher{serverCrasher: serverCrasher{st: st, srv: srv}, dir: srv.Dir()}
	c.backing = c.dir + ".durable"
	if err := srv.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("durability: stop the server to mount its data dir: %w", err)
	}
	if err := c.mount(ctx); err != nil {
		// Bring the server back on its own dir, as the run expects it.
		return nil, errors.Join(err, c.restore(ctx))
	}
	if _, err := c.serverCrasher.restart(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("durability: start the server on the power-cut filesystem: %w", err), c.unmount(ctx), c.restore(ctx))
	}
	return c, nil
}

// mount moves the data dir aside and serves it at its own path. What the
// server wrote before the first trial (initdb, its config) is durable:
// the disk held it long before the cut.
func (c *powerCrasher) mount(ctx context.Context) error {
	st, err := os.Stat(c.dir)
	if err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	if err := os.Rename(c.dir, c.backing); err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	if err := os.Mkdir(c.dir, st.Mode().Perm()); err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	fs, err := powercut.Mount(ctx, c.backing, c.dir)
	if err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	c.fs = fs
	return fs.SyncAll()
}

// restart cuts the power under the killed server, remounts what survived
// and starts the server on it.
func (c *powerCrasher) restart(ctx context.Context) (time.Duration, error) {
	if err := cutAndRemount(ctx, c.fs, &c.cuts); err != nil {
		return 0, err
	}
	return c.serverCrasher.restart(ctx)
}

// cutAndRemount cuts the power under fs, whose users are dead, counts
// what the cut discarded into cuts and serves what survived.
func cutAndRemount(ctx context.Context, fs *powercut.FS, cuts *schema.Cuts) error {
	rep, err := fs.Cut(ctx)
	if err != nil {
		return fmt.Errorf("durability: power cut: %w", err)
	}
	addCut(cuts, rep)
	if err := fs.Remount(ctx); err != nil {
		return fmt.Errorf("durability: remount after the cut: %w", err)
	}
	return nil
}

func (c *powerCrasher) mountStore(context.Context) (store.Store, func(), error) {
	return c.st, func() {}, nil
}

func (c *powerCrasher) syncAll() error { return c.fs.SyncAll() }

func (c *powerCrasher) cutsSoFar() *schema.Cuts { return &c.cuts }

func (c *powerCrasher) crash() string {
	kind, pid := c.srv.Describe()
	return fmt.Sprintf("a power cut: SIGKILL of the %s server's processes (pid %d and its children), then every write and name change that no fsync had made durable discarded (powercut filesystem), then a restart on what survived", kind, pid)
}

// close shuts the server down, unmounts and puts its data dir back, and
// starts it again: the run finds it as it was, on the plain disk.
func (c *powerCrasher) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
	if c.unmount(ctx) == nil && c.restore(ctx) == nil {
		_, _ = c.serverCrasher.restart(ctx)
	}
}

func (c *powerCrasher) unmount(ctx context.Context) error {
	if c.fs == nil {
		return nil
	}
	if err := c.fs.Unmount(ctx); err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	c.fs = nil
	return nil
}

// restore puts the backing directory back at the data dir's path.
func (c *powerCrasher) restore(context.Context) error {
	if _, err := os.Stat(c.backing); err != nil {
		return nil // never moved
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	if err := os.Rename(c.backing, c.dir); err != nil {
		return fmt.Errorf("durability: %w", err)
	}
	return nil
}
