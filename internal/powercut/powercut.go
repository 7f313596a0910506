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
package powercut

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/owner"
)

const markerName = owner.MarkerFile

// fsName is the mount's type after "fuse." in /proc/self/mountinfo, how
// CleanStale knows storebench's mounts; the source names the owner process.
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
	t          *tracker

	mu     sync.Mutex
	server *fuse.Server
	served chan struct{} // closed when the server's loop returns
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
	f := &FS{backing: backing, mountpoint: mountpoint, t: newTracker(backing)}
	if err := f.mount(); err != nil {
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

// mount mounts, with a fresh attic if the last unmount removed it.
func (f *FS) mount() (err error) {
	if f.attic == "" {
		attic, err := owner.MakeDir(filepath.Dir(f.backing), "."+filepath.Base(f.backing)+".powercut-*", "powercut attic")
		if err != nil {
			return fmt.Errorf("powercut: attic: %w", err)
		}
		if err := sameDevice(f.backing, attic); err != nil {
			return errors.Join(err, os.RemoveAll(attic))
		}
		f.attic, f.t.attic = attic, attic
		defer func() {
			if err != nil {
				err = errors.Join(err, os.RemoveAll(attic))
				f.attic, f.t.attic = "", ""
			}
		}()
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.backing, &st); err != nil {
		return fmt.Errorf("powercut: %w", err)
	}
	root := &fs.LoopbackRoot{Path: f.backing, Dev: st.Dev}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return newNode(f.t, r)
	}
	rootNode := newNode(f.t, root)
	root.RootNode = rootNode
	sec := time.Second
	self := owner.Self()
	opts := &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			AllowOther:        true,
			Options:           []string{"default_permissions"},
			FsName:            sourcePrefix + strconv.Itoa(self.PID) + ":" + strconv.FormatUint(self.Start, 10),
			Name:              fsName,
			DirectMountStrict: true,
			// Locks stay in the kernel, with POSIX's per-process owners:
			// forwarded, the loopback takes them as OFD locks, one per
			// descriptor, and SQLite's connections of one process lock
			// each other out. Every user of the mount is on this machine.
			EnableLocks: false,
		},
	}
	server, err := fuse.NewServer(fs.NewNodeFS(rootNode, opts), f.mountpoint, &opts.MountOptions)
	if err != nil {
		return fmt.Errorf("powercut: mount %s: %w", f.mountpoint, err)
	}
	served := make(chan struct{})
	go func() {
		server.Serve()
		close(served)
	}()
	if err := server.WaitMount(); err != nil {
		_ = unmountForce(f.mountpoint)
		return fmt.Errorf("powercut: mount %s: %w", f.mountpoint, err)
	}
	f.mu.Lock()
	f.server, f.served = server, served
	f.mu.Unlock()
	return nil
}

// Mountpoint is where the filesystem is (or was) mounted.
func (f *FS) Mountpoint() string { return f.mountpoint }

// SyncAll makes everything written so far durable, as a sync(2) that
// returned would: what a store set up before the measured writes (initdb,
// config files) is what the disk held long before the cut.
func (f *FS) SyncAll() error {
	if err := f.t.syncAll(); err != nil {
		return fmt.Errorf("powercut: sync: %w", err)
	}
	return nil
}

// Cut plays a power loss. The processes using the mount must be dead
// already (SIGKILLed): the mount is taken away even if files are still
// open, and the backing directory is rolled back to its durable state.
// Remount serves what survived.
func (f *FS) Cut(ctx context.Context) (CutReport, error) {
	if f.attic == "" {
		return CutReport{}, fmt.Errorf("powercut: %s was unmounted cleanly: nothing to cut", f.mountpoint)
	}
	if err := f.unmount(ctx, true); err != nil {
		return CutReport{}, err
	}
	return f.t.rollback()
}

// Remount mounts the backing directory again after Cut; everything in it
// is durable.
func (f *FS) Remount(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	mounted := f.server != nil
	f.mu.Unlock()
	if mounted {
		return fmt.Errorf("powercut: %s is still mounted", f.mountpoint)
	}
	if err := f.t.syncAll(); err != nil {
		return fmt.Errorf("powercut: %w", err)
	}
	return f.mount()
}

// Unmount unmounts cleanly, as a shutdown would (everything written stays),
// and removes the attic. It waits a little for files still open to close,
// then takes the mount away regardless. The mountpoint is left, empty but
// for its owner marker, for its maker to remove.
func (f *FS) Unmount(ctx context.Context) error {
	if err := f.unmount(ctx, false); err != nil {
		return err
	}
	if f.attic == "" {
		return nil
	}
	if err := os.RemoveAll(f.attic); err != nil {
		return fmt.Errorf("powercut: %w", err)
	}
	f.attic, f.t.attic = "", ""
	return nil
}

// busyWait is how long a clean unmount waits for open files to close.
const busyWait = 2 * time.Second

func (f *FS) unmount(ctx context.Context, force bool) error {
	f.mu.Lock()
	server, served := f.server, f.served
	f.server, f.served = nil, nil
	f.mu.Unlock()
	if server == nil {
		return nil
	}
	err := unix.Unmount(f.mountpoint, 0)
	for wait := 5 * time.Millisecond; errors.Is(err, unix.EBUSY) && !force && wait < busyWait; wait *= 2 {
		time.Sleep(wait)
		err = unix.Unmount(f.mountpoint, 0)
	}
	if errors.Is(err, unix.EBUSY) {
		err = unmountForce(f.mountpoint)
	}
	if err != nil && !errors.Is(err, unix.EINVAL) { // EINVAL: no longer mounted
		return fmt.Errorf("powercut: unmount %s: %w", f.mountpoint, err)
	}
	select {
	case <-served:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("powercut: unmount %s: the filesystem still serves: %w", f.mountpoint, ctx.Err())
	}
}

// unmountForce aborts the FUSE connection (MNT_FORCE), so that no request
// is answered any more, and detaches the mount from the tree.
func unmountForce(mountpoint string) error {
	err := unix.Unmount(mountpoint, unix.MNT_FORCE)
	if err == nil || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return unix.Unmount(mountpoint, unix.MNT_DETACH)
}
