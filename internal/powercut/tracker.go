package powercut

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// blockSize is the grain of the undo log: the first write to a block since
// its file's last fsync saves the block's durable bytes.
const blockSize = 4096

// MaxUndoBytes bounds the memory the undo log may hold: durable bytes of
// blocks overwritten since their file's last fsync. A write that would
// pass it fails with ENOSPC (and is counted in CutReport.WritesRefused):
// keeping it without its undo would make the cut lie.
const MaxUndoBytes = 512 << 20

// fileUndo is what a power cut would take back from one file (an inode):
// its size at the last fsync and the durable bytes of every block
// overwritten or truncated away since.
type fileUndo struct {
	durableSize int64
	saved       map[int64][]byte // block index -> durable bytes (short at durable EOF)
	// written counts the bytes written since the last fsync, for the report.
	written int64
}

// entry is one name of a directory as it was when the directory was last
// made durable.
type entry struct {
	ino      uint64
	mode     uint32 // type and permission bits
	uid, gid uint32
}

func (e entry) isDir() bool { return e.mode&syscall.S_IFMT == syscall.S_IFDIR }

// tracker keeps the durable state of the backing tree as undo information:
// the backing directory always holds the latest state (what the running
// store sees); the tracker holds what a power cut would bring back.
//
// Inodes identify files and directories, since renames move them: an inode
// whose last durable name is removed is kept alive by a hard link (a
// directory by a rename) in the attic, named by its number, until no
// snapshot names it.
type tracker struct {
	backing string
	attic   string

	// ns serializes name changes with the snapshots taken before them.
	ns sync.Mutex
	// mu guards everything below; writes hold it from the undo save to the
	// pwrite so that no write slips between a save and an fsync.
	mu    sync.Mutex
	files map[uint64]*fileUndo
	// dirs are the durable listings of directories changed since their last
	// fsync; a directory not in dirs is durable as it is.
	dirs map[uint64]map[string]entry
	// refs counts the entries of dirs naming each inode.
	refs map[uint64]int
	// atticked are the inodes the attic holds.
	atticked  map[uint64]bool
	undoBytes int64
	maxUndo   int64 // MaxUndoBytes; lower in tests
	refused   int64
}

func newTracker(backing string) *tracker {
	t := &tracker{backing: backing, maxUndo: MaxUndoBytes}
	t.reset()
	return t
}

// reset forgets every undo: all that the backing holds is durable.
func (t *tracker) reset() {
	t.files = map[uint64]*fileUndo{}
	t.dirs = map[uint64]map[string]entry{}
	t.refs = map[uint64]int{}
	t.atticked = map[uint64]bool{}
	t.undoBytes = 0
}

func (t *tracker) atticPath(ino uint64) string {
	return filepath.Join(t.attic, "ino-"+strconv.FormatUint(ino, 10))
}

// errUndoBudget refuses a write whose undo would pass MaxUndoBytes.
var errUndoBudget = fmt.Errorf("undo log over %d MiB", MaxUndoBytes>>20)

// modify runs op, a change of file ino's bytes in [from, to) (to < 0: up
// to its end), after saving the durable bytes it overwrites. rfd reads the
// file. written is what op writes, for the report.
func (t *tracker) modify(ino uint64, rfd int, from, to, written int64, op func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, err := t.undoOf(ino, rfd)
	if err != nil {
		return err
	}
	if to < 0 || to > u.durableSize {
		to = u.durableSize
	}
	var need []int64
	for b := max(from, 0) / blockSize; b*blockSize < to; b++ {
		if _, ok := u.saved[b]; !ok {
			need = append(need, b)
		}
	}
	if t.undoBytes+int64(len(need))*blockSize > t.maxUndo {
		t.refused++
		return errUndoBudget
	}
	for _, b := range need {
		buf := make([]byte, min(blockSize, u.durableSize-b*blockSize))
		n, err := syscall.Pread(rfd, buf, b*blockSize)
		if err != nil {
			return fmt.Errorf("save block %d of inode %d: %w", b, ino, err)
		}
		u.saved[b] = buf[:n]
		t.undoBytes += int64(n)
	}
	u.written += written
	return op()
}

// undoOf is ino's undo, begun at the file's present size if it had none.
func (t *tracker) undoOf(ino uint64, rfd int) (*fileUndo, error) {
	if u := t.files[ino]; u != nil {
		return u, nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(rfd, &st); err != nil {
		return nil, err
	}
	u := &fileUndo{durableSize: st.Size, saved: map[int64][]byte{}}
	t.files[ino] = u
	return u, nil
}

// created records a file new since the last fsync: its durable content is
// empty (a reused inode number forgets the old file's undo).
func (t *tracker) created(ino uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropUndo(ino)
	t.files[ino] = &fileUndo{saved: map[int64][]byte{}}
}

// synced makes ino's bytes durable: fsync, fdatasync, an O_SYNC write.
func (t *tracker) synced(ino uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropUndo(ino)
}

func (t *tracker) dropUndo(ino uint64) {
	if u := t.files[ino]; u != nil {
		for _, b := range u.saved {
			t.undoBytes -= int64(len(b))
		}
		delete(t.files, ino)
	}
}

// snapshot records dir's listing as its durable one unless it already has
// one, before a change of its names. The caller holds t.ns.
func (t *tracker) snapshot(dir string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return 0, err
	}
	t.mu.Lock()
	_, done := t.dirs[st.Ino]
	t.mu.Unlock()
	if done {
		return st.Ino, nil
	}
	list, err := listDir(dir)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirs[st.Ino] = list
	for _, e := range list {
		t.refs[e.ino]++
	}
	return st.Ino, nil
}

func listDir(dir string) (map[string]entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	list := make(map[string]entry, len(des))
	for _, de := range des {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, de.Name()), &st); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue
			}
			return nil, err
		}
		list[de.Name()] = entry{ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid}
	}
	return list, nil
}

// keepAlive is called before path loses a name (unlink, rmdir, rename
// over it): when a durable listing names its inode and this is its last
// name, the inode moves to the attic instead of being freed, and moved
// reports that the name is gone already. The caller holds t.ns.
func (t *tracker) keepAlive(path string, st *syscall.Stat_t) (moved bool, err error) {
	t.mu.Lock()
	needed := t.refs[st.Ino] > 0
	t.mu.Unlock()
	isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
	if !needed {
		if st.Nlink <= 1 || isDir {
			// The inode is freed and its number may come back as another file.
			t.mu.Lock()
			t.dropUndo(st.Ino)
			t.dropSnapshot(st.Ino)
			t.mu.Unlock()
		}
		return false, nil
	}
	if !isDir && st.Nlink > 1 {
		return false, nil // another name keeps it alive
	}
	if err := syscall.Rename(path, t.atticPath(st.Ino)); err != nil {
		return false, fmt.Errorf("keep inode %d in the attic: %w", st.Ino, err)
	}
	t.mu.Lock()
	t.atticked[st.Ino] = true
	t.mu.Unlock()
	return true, nil
}

// keepLinked is keepAlive for a file about to be replaced by a rename: a
// hard link keeps it, so the rename stays atomic.
func (t *tracker) keepLinked(path string, st *syscall.Stat_t) error {
	t.mu.Lock()
	needed := t.refs[st.Ino] > 0 && !t.atticked[st.Ino]
	t.mu.Unlock()
	if !needed {
		if st.Nlink <= 1 {
			t.mu.Lock()
			t.dropUndo(st.Ino)
			t.mu.Unlock()
		}
		return nil
	}
	if err := unix.Linkat(unix.AT_FDCWD, path, unix.AT_FDCWD, t.atticPath(st.Ino), 0); err != nil {
		return fmt.Errorf("keep inode %d in the attic: %w", st.Ino, err)
	}
	t.mu.Lock()
	t.atticked[st.Ino] = true
	t.mu.Unlock()
	return nil
}

// dirSynced makes dir's names durable (fsync of the directory), and frees
// the attic's inodes no durable listing names any more.
func (t *tracker) dirSynced(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	t.ns.Lock()
	defer t.ns.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropSnapshot(st.Ino)
}

// dropSnapshot forgets dir ino's durable listing; the attic's inodes it
// alone named are freed, and a freed directory's own listing with them.
// The caller holds t.mu.
func (t *tracker) dropSnapshot(ino uint64) error {
	var errs []error
	work := []uint64{ino}
	for len(work) > 0 {
		d := work[len(work)-1]
		work = work[:len(work)-1]
		list, ok := t.dirs[d]
		if !ok {
			continue
		}
		delete(t.dirs, d)
		for _, e := range list {
			t.refs[e.ino]--
			if t.refs[e.ino] > 0 {
				continue
			}
			delete(t.refs, e.ino)
			if !t.atticked[e.ino] {
				continue
			}
			delete(t.atticked, e.ino)
			p := t.atticPath(e.ino)
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := os.Remove(p); err != nil {
				errs = append(errs, fmt.Errorf("free inode %d from the attic: %w", e.ino, err))
				continue
			}
			if e.isDir() {
				work = append(work, e.ino)
			} else if st.Nlink <= 1 {
				t.dropUndo(e.ino)
			}
		}
	}
	return errors.Join(errs...)
}

// syncAll makes everything durable, as a completed sync(2) would.
func (t *tracker) syncAll() error {
	t.ns.Lock()
	defer t.ns.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reset()
	if t.attic == "" {
		return nil // unmounted: no attic
	}
	return emptyAttic(t.attic)
}

// emptyAttic removes everything in the attic but its owner marker.
func emptyAttic(attic string) error {
	des, err := os.ReadDir(attic)
	if err != nil {
		return err
	}
	var errs []error
	for _, de := range des {
		if de.Name() == markerName {
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(attic, de.Name())))
	}
	return errors.Join(errs...)
}
