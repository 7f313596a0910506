// Package powercut is a FUSE filesystem that passes everything through to
// a backing directory and keeps, in memory, what a power loss would take
// back: file bytes written since the file's last fsync, and names created,
// removed or renamed since their directory's last fsync (LazyFS's model,
// with POSIX's strict reading of fsync). Cut plays the power loss: it
// unmounts and rolls the backing directory back to its durable state, so
// a store restarted on it recovers from what a real disk with a volatile
// cache would have kept.
//
// What counts as durable:
//   - a file's bytes and size: after fsync or fdatasync of the file (any
//     handle), or each write of a handle opened O_SYNC or O_DSYNC (the
//     whole file then, as an fdatasync would make it);
//   - a name (create, mkdir, mknod, symlink, link, unlink, rmdir, rename):
//     after an fsync of its directory; a rename's two sides each with their
//     own directory's fsync. A file's fsync does not make its name durable
//     (ext4 happens to, POSIX does not promise it);
//   - mode, owner, times and xattrs pass through and are taken as durable at
//     once; sync(2) and syncfs(2) do not reach a FUSE filesystem: SyncAll
//     stands for them.
//
// The undo log keeps the durable bytes of every 4 KiB block overwritten
// since its file's last fsync, up to MaxUndoBytes; appends cost nothing
// (a rollback truncates them). Removed inodes a durable listing still
// names are kept alive by a hard link in the attic, a directory beside the
// backing one on the same filesystem.
//
// The filesystem is served by another process: this executable started
// again (see init), which holds /dev/fuse and the undo state; FS asks it
// over pipes to mount, sync, cut and unmount. A Go process must not serve
// a FUSE mount it also uses: a thread of it blocked in the kernel on the
// mount (a vfork'd child closing descriptors there, say) cannot be stopped
// for the garbage collector's stop-the-world, which then never lets the
// serving goroutines answer it (golang/go#21014). The server unmounts and
// exits when storebench closes its stdin, dies, or stops waiting for an
// answer (it is killed then).
package powercut

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/storebench/storebench/internal/owner"
)

const markerName = owner.MarkerFile

// fsName is the mount's type after "fuse." in /proc/self/mountinfo, how
// CleanStale knows storebench's mounts; the source names the server.
const (
	fsName       = "storebench-powercut"
	sourcePrefix = "storebench:"
)

// FS is a mounted (or cut) power-cut filesystem. Its methods are for one
// goroutine at a time (the one that drives the trial).
type FS struct {
	backing    string
	mountpoint string
	attic      string

	mu      sync.Mutex // serializes the requests to the server
	c       *child     // the serving process; nil before a mount and after Unmount
	mounted bool       // as the server last said
}

// Mount serves backing at mountpoint, both existing directories, neither
// inside the other. The mountpoint is marked as storebench's (owner) if it
// is not yet. As root, the mount allows other users (a managed server runs
// as an unprivileged account) with the kernel checking permissions.
func Mount(ctx context.Context, backing, mountpoint string) (*FS, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := requireFUSE(); err != nil {
		return nil, err
	}
	var err error
	if backing, err = checkDir("backing", backing); err != nil {
		return nil, err
	}
	if mountpoint, err = checkDir("mountpoint", mountpoint); err != nil {
		return nil, err
	}
	if within(backing, mountpoint) || within(mountpoint, backing) {
		return nil, fmt.Errorf("powercut: backing %s and mountpoint %s must not be one inside the other", backing, mountpoint)
	}
	if _, err := owner.ReadMarker(mountpoint); errors.Is(err, owner.ErrNoMarker) {
		if err := owner.Mark(mountpoint, "powercut mountpoint"); err != nil {
			return nil, fmt.Errorf("powercut: %w", err)
		}
	}
	f := &FS{backing: backing, mountpoint: mountpoint}
	if err := f.mount(ctx); err != nil {
		if f.c != nil {
			err = errors.Join(err, f.c.stop())
		}
		return nil, err
	}
	return f, nil
}

// Check says what is missing when this process cannot mount (nil: it can),
// for a plan to refuse a power cut before any work.
func Check() error { return requireFUSE() }

// requireFUSE says what is missing when this process cannot mount.
func requireFUSE() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("powercut: /dev/fuse is missing (%v): load the fuse module (modprobe fuse) or, in a container, pass --device /dev/fuse", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("powercut: mounting needs root (CAP_SYS_ADMIN): storebench mounts with mount(2), not fusermount")
	}
	return nil
}

func checkDir(what, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("powercut: %s: %w", what, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("powercut: %s: %w", what, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("powercut: %s %s is not a directory", what, abs)
	}
	return abs, nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func sameDevice(a, b string) error {
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		return err
	}
	if err := syscall.Stat(b, &sb); err != nil {
		return err
	}
	if sa.Dev != sb.Dev {
		return fmt.Errorf("powercut: backing %s is a mount of its own: its parent must be on the same filesystem (the attic keeps inodes by hard links)", a)
	}
	return nil
}

// mount mounts, with a fresh attic if the last unmount removed it, and a
// server if there is none.
func (f *FS) mount(ctx context.Context) (err error) {
	if f.attic == "" {
		attic, err := owner.MakeDir(filepath.Dir(f.backing), "."+filepath.Base(f.backing)+".powercut-*", "powercut attic")
		if err != nil {
			return fmt.Errorf("powercut: attic: %w", err)
		}
		if err := sameDevice(f.backing, attic); err != nil {
			return errors.Join(err, os.RemoveAll(attic))
		}
		f.attic = attic
		defer func() {
			if err != nil {
				err = errors.Join(err, os.RemoveAll(attic))
				f.attic = ""
			}
		}()
	}
	_, err = f.call(ctx, request{Op: opMount, Backing: f.backing, Mountpoint: f.mountpoint, Attic: f.attic})
	return err
}

// errNoServer answers a request other than a mount when there is no
// server: none was started since Unmount, or it is gone, which an earlier
// error said.
var errNoServer = errors.New("no serving process")

// call sends req to the server; a mount starts one first if there is none.
// When the server is gone (it died, or was killed for not answering), the
// mount is taken away if it is still there, and the error says so; the
// next mount starts a new server.
func (f *FS) call(ctx context.Context, req request) (response, error) {
	if err := ctx.Err(); err != nil {
		return response{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.c == nil {
		if req.Op != opMount {
			return response{}, errNoServer
		}
		c, err := startChild()
		if err != nil {
			return response{}, err
		}
		f.c = c
	}
	resp, err := f.c.call(ctx, req)
	if err != nil {
		// The server is gone; its mount, dead, must not stay (a mount
		// request may have mounted before it died).
		f.c, f.mounted = nil, false
		if uerr := unmountForce(f.mountpoint); uerr != nil {
			err = errors.Join(err, fmt.Errorf("powercut: unmount %s: %w", f.mountpoint, uerr))
		}
		return resp, err
	}
	f.mounted = resp.Mounted
	if resp.Err != "" {
		return resp, errors.New(resp.Err)
	}
	return resp, nil
}

// Mountpoint is where the filesystem is (or was) mounted.
func (f *FS) Mountpoint() string { return f.mountpoint }

// syncWait bounds SyncAll, which has no context: it forgets the undo and
// empties the attic.
const syncWait = time.Minute

// SyncAll makes everything written so far durable, as a sync(2) that
// returned would: what a store set up before the measured writes (initdb,
// config files) is what the disk held long before the cut.
func (f *FS) SyncAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), syncWait)
	defer cancel()
	_, err := f.call(ctx, request{Op: opSyncAll})
	switch {
	case err == nil, errors.Is(err, errNoServer): // no server: nothing mounted since Unmount, nothing to forget
		return nil
	case errors.Is(err, errServerGone):
		return err
	}
	return fmt.Errorf("powercut: sync: %w", err)
}

// Cut plays a power loss. The processes using the mount must be dead
// already (SIGKILLed): the mount is taken away even if files are still
// open, and the backing directory is rolled back to its durable state.
// Remount serves what survived.
func (f *FS) Cut(ctx context.Context) (CutReport, error) {
	if f.attic == "" {
		return CutReport{}, fmt.Errorf("powercut: %s was unmounted cleanly: nothing to cut", f.mountpoint)
	}
	resp, err := f.call(ctx, request{Op: opCut})
	if errors.Is(err, errNoServer) {
		return CutReport{}, fmt.Errorf("powercut: cut %s: the serving process is gone, with what a cut would take back", f.mountpoint)
	}
	return resp.Report, err // with an error, what the rollback got done
}

// Remount mounts the backing directory again after Cut; everything in it
// is durable.
func (f *FS) Remount(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	mounted := f.mounted
	f.mu.Unlock()
	if mounted {
		return fmt.Errorf("powercut: %s is still mounted", f.mountpoint)
	}
	_, err := f.call(ctx, request{Op: opSyncAll})
	if errors.Is(err, errServerGone) {
		return err
	}
	if err != nil && !errors.Is(err, errNoServer) {
		return fmt.Errorf("powercut: %w", err)
	}
	return f.mount(ctx)
}

// Unmount unmounts cleanly, as a shutdown would (everything written stays),
// ends the server and removes the attic. It waits a little for files still
// open to close, then takes the mount away regardless. The mountpoint is
// left, empty but for its owner marker, for its maker to remove.
func (f *FS) Unmount(ctx context.Context) error {
	f.mu.Lock()
	c := f.c
	f.mu.Unlock()
	if c != nil {
		if _, err := f.call(ctx, request{Op: opUnmount}); err != nil {
			return err
		}
		f.mu.Lock()
		f.c = nil
		f.mu.Unlock()
		if err := c.stop(); err != nil {
			return err
		}
	}
	if f.attic == "" {
		return nil
	}
	if err := os.RemoveAll(f.attic); err != nil {
		return fmt.Errorf("powercut: %w", err)
	}
	f.attic = ""
	return nil
}
