package powercut

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a loopback node whose changes of names and bytes go through the
// tracker first. Reads, lookups and attributes are the loopback's own.
type node struct {
	fs.LoopbackNode
	t *tracker
}

func newNode(t *tracker, root *fs.LoopbackRoot) *node {
	return &node{LoopbackNode: fs.LoopbackNode{RootData: root}, t: t}
}

func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(nil))
}

var (
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
)

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errors.Is(err, errUndoBudget) {
		return syscall.ENOSPC
	}
	return fs.ToErrno(err)
}

// Create makes a file whose durable content is empty; its name is durable
// once its directory is fsynced.
func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	dir := n.backingPath()
	if _, err := n.t.snapshot(dir); err != nil {
		return nil, nil, 0, errno(err)
	}
	p := filepath.Join(dir, name)
	var before syscall.Stat_t
	existed := syscall.Lstat(p, &before) == nil
	fd, err := syscall.Open(p, openFlags(flags)|syscall.O_CREAT, mode)
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	if caller, ok := fuse.FromContext(ctx); ok && os.Geteuid() == 0 {
		// As root, the file is the caller's, as on a local filesystem.
		_ = syscall.Fchown(fd, int(caller.Uid), int(caller.Gid))
	}
	h, st, err := n.t.newHandle(fd, flags)
	if err != nil {
		syscall.Close(fd)
		return nil, nil, 0, errno(err)
	}
	if !existed {
		n.t.created(st.Ino)
	} else if err := h.truncateOnOpen(flags); err != nil {
		h.close()
		return nil, nil, 0, errno(err)
	}
	child := n.NewInode(ctx, newNode(n.t, n.RootData), idFromStat(n.RootData, st))
	out.FromStat(st)
	return child, h, 0, 0
}

// openFlags are the flags of the backing open: O_APPEND goes (the kernel
// sends offsets), O_TRUNC is done by the tracker, which saves first.
func openFlags(flags uint32) int {
	return int(flags)&^(syscall.O_APPEND|syscall.O_TRUNC) | syscall.O_CLOEXEC | syscall.O_NOFOLLOW
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fd, err := syscall.Open(n.backingPath(), openFlags(flags), 0)
	if err != nil {
		return nil, 0, errno(err)
	}
	h, _, err := n.t.newHandle(fd, flags)
	if err != nil {
		syscall.Close(fd)
		return nil, 0, errno(err)
	}
	if err := h.truncateOnOpen(flags); err != nil {
		h.close()
		return nil, 0, errno(err)
	}
	return h, 0, 0
}

// idFromStat is the loopback's inode numbering for a backing stat.
func idFromStat(r *fs.LoopbackRoot, st *syscall.Stat_t) fs.StableAttr {
	swapped := (st.Dev << 32) | (st.Dev >> 32)
	swappedRootDev := (r.Dev << 32) | (r.Dev >> 32)
	return fs.StableAttr{Mode: st.Mode, Gen: 1, Ino: (swapped ^ swappedRootDev) ^ st.Ino}
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	if _, err := n.t.snapshot(n.backingPath()); err != nil {
		return nil, errno(err)
	}
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	if _, err := n.t.snapshot(n.backingPath()); err != nil {
		return nil, errno(err)
	}
	ch, e := n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
	var st syscall.Stat_t
	if e == 0 && mode&syscall.S_IFMT == syscall.S_IFREG && syscall.Lstat(filepath.Join(n.backingPath(), name), &st) == nil {
		n.t.created(st.Ino)
	}
	return ch, e
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	if _, err := n.t.snapshot(n.backingPath()); err != nil {
		return nil, errno(err)
	}
	return n.LoopbackNode.Symlink(ctx, target, name, out)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	if _, err := n.t.snapshot(n.backingPath()); err != nil {
		return nil, errno(err)
	}
	return n.LoopbackNode.Link(ctx, target, name, out)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

func (n *node) remove(name string, isDir bool) syscall.Errno {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	dir := n.backingPath()
	if _, err := n.t.snapshot(dir); err != nil {
		return errno(err)
	}
	p := filepath.Join(dir, name)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return errno(err)
	}
	switch gotDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR; {
	case isDir && !gotDir:
		return syscall.ENOTDIR
	case !isDir && gotDir:
		return syscall.EISDIR
	case isDir:
		if empty, err := isEmptyDir(p); err != nil || !empty {
			if err != nil {
				return errno(err)
			}
			return syscall.ENOTEMPTY
		}
	}
	moved, err := n.t.keepAlive(p, &st)
	if err != nil || moved {
		return errno(err)
	}
	if isDir {
		return errno(syscall.Rmdir(p))
	}
	return errno(syscall.Unlink(p))
}

func isEmptyDir(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// Rename keeps a replaced target alive for the durable listings that name
// it, then renames: the new name is durable once both directories are
// fsynced (each side is undone by its own directory's rollback).
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	from, to := n.backingPath(), np.backingPath()
	for _, d := range []string{from, to} {
		if _, err := n.t.snapshot(d); err != nil {
			return errno(err)
		}
	}
	if flags&(unix.RENAME_EXCHANGE|unix.RENAME_NOREPLACE) == 0 {
		target := filepath.Join(to, newName)
		var src, st syscall.Stat_t
		if syscall.Lstat(filepath.Join(from, name), &src) == nil && syscall.Lstat(target, &st) == nil && src.Ino != st.Ino {
			if err := n.keepReplaced(target, &src, &st); err != nil {
				return errno(err)
			}
		}
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

// keepReplaced keeps a rename's target alive when the rename will succeed.
func (n *node) keepReplaced(target string, src, st *syscall.Stat_t) error {
	srcDir := src.Mode&syscall.S_IFMT == syscall.S_IFDIR
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		if srcDir {
			return syscall.ENOTDIR
		}
		return n.t.keepLinked(target, st)
	}
	if !srcDir {
		return syscall.EISDIR
	}
	empty, err := isEmptyDir(target)
	if err != nil {
		return err
	}
	if !empty {
		return syscall.ENOTEMPTY
	}
	_, err = n.t.keepAlive(target, st)
	return err
}

// Setattr saves what a truncation cuts off before it happens.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	size, ok := in.GetSize()
	if !ok {
		return n.LoopbackNode.Setattr(ctx, f, in, out)
	}
	var e syscall.Errno
	run := func() error {
		e = n.LoopbackNode.Setattr(ctx, f, in, out)
		if e != 0 {
			return e
		}
		return nil
	}
	if h, ok := f.(*handle); ok {
		return errno(n.t.modify(h.ino, h.rfd, int64(size), -1, 0, run))
	}
	rfd, err := syscall.Open(n.backingPath(), syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return errno(err)
	}
	defer syscall.Close(rfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(rfd, &st); err != nil {
		return errno(err)
	}
	return errno(n.t.modify(st.Ino, rfd, int64(size), -1, 0, run))
}

// OpendirHandle wraps the loopback's directory handle so that its fsync
// makes the directory's names durable.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, e := n.LoopbackNode.OpendirHandle(ctx, flags)
	if e != 0 {
		return nil, 0, e
	}
	ds, ok := fh.(loopbackDir)
	if !ok {
		if r, ok := fh.(fs.FileReleasedirer); ok {
			r.Releasedir(ctx, 0)
		}
		return nil, 0, syscall.ENOTSUP
	}
	return &dirHandle{loopbackDir: ds, n: n}, fuseFlags, 0
}

type loopbackDir interface {
	fs.FileReaddirenter
	fs.FileReleasedirer
	fs.FileSeekdirer
	fs.FileFsyncdirer
}

type dirHandle struct {
	loopbackDir
	n *node
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if e := d.loopbackDir.Fsyncdir(ctx, flags); e != 0 {
		return e
	}
	return errno(d.n.t.dirSynced(d.n.backingPath()))
}

// loopbackFile is what handle passes on to the loopback's file handle:
// not PassthroughFd (the kernel would write to the backing file behind
// our back), nor Ioctl (a clone or a punch would too).
type loopbackFile interface {
	fs.FileReader
	fs.FileReleaser
	fs.FileFlusher
	fs.FileGetattrer
	fs.FileSetattrer
	fs.FileLseeker
	fs.FileGetlker
	fs.FileSetlker
	fs.FileSetlkwer
	fs.FileStatxer
}

// handle is an open file: its writes, truncations, allocations and fsyncs
// go through the tracker.
type handle struct {
	loopbackFile
	t   *tracker
	fd  int
	rfd int // reads the durable bytes before a write (fd may be write-only)
	ino uint64
}

func (t *tracker) newHandle(fd int, flags uint32) (*handle, *syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, nil, err
	}
	rfd := fd
	if int(flags)&syscall.O_ACCMODE == syscall.O_WRONLY {
		var err error
		rfd, err = syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
	}
	lf, ok := fs.NewLoopbackFile(fd).(loopbackFile)
	if !ok {
		if rfd != fd {
			syscall.Close(rfd)
		}
		return nil, nil, syscall.ENOTSUP
	}
	return &handle{loopbackFile: lf, t: t, fd: fd, rfd: rfd, ino: st.Ino}, &st, nil
}

func (h *handle) truncateOnOpen(flags uint32) error {
	if int(flags)&syscall.O_TRUNC == 0 {
		return nil
	}
	return h.t.modify(h.ino, h.rfd, 0, -1, 0, func() error { return syscall.Ftruncate(h.fd, 0) })
}

func (h *handle) close() {
	h.Release(context.Background())
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	if h.rfd != h.fd {
		syscall.Close(h.rfd)
	}
	return h.loopbackFile.Release(ctx)
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	var n int
	err := h.t.modify(h.ino, h.rfd, off, off+int64(len(data)), int64(len(data)), func() error {
		var err error
		n, err = syscall.Pwrite(h.fd, data, off)
		return err
	})
	return uint32(n), errno(err)
}

// Fsync (and fdatasync) makes the file's bytes durable, not its name. The
// kernel sends one after each write of a handle opened O_SYNC or O_DSYNC
// (generic_write_sync), which makes those durable too.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	// The undo goes first: a write after it is after the fsync.
	h.t.synced(h.ino)
	return errno(syscall.Fsync(h.fd))
}

func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	from := int64(off)
	if mode&^unix.FALLOC_FL_KEEP_SIZE == 0 {
		from = 1 << 62 // plain allocation changes no byte, only maybe the size
	}
	return errno(h.t.modify(h.ino, h.rfd, from, -1, 0, func() error {
		return unix.Fallocate(h.fd, mode, int64(off), int64(size))
	}))
}
