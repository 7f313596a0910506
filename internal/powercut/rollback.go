package powercut

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// CutReport is what a power cut took back.
type CutReport struct {
	// FilesRolledBack are the surviving files whose content went back to
	// their last fsync (truncated, or overwritten blocks restored).
	FilesRolledBack int `json:"files_rolled_back"`
	// BytesDiscarded are the bytes written since their file's last fsync
	// (each write counted whole, also in files whose name did not survive).
	BytesDiscarded int64 `json:"bytes_discarded"`
	// NamesUndone are the names created, removed or renamed since their
	// directory's last fsync that the cut took back, counted per directory.
	NamesUndone int `json:"names_undone"`
	// WritesRefused were refused (ENOSPC) because their undo would pass
	// MaxUndoBytes.
	WritesRefused int64 `json:"writes_refused,omitempty"`
}

// rollback rebuilds the backing tree as a power cut would leave it. The
// mount is gone: nothing changes the backing meanwhile.
//
// The durable tree is assembled in the attic from hard links to the
// surviving inodes (wherever they are now: under another name, or in the
// attic), directories made afresh with their durable owner and mode; the
// file contents are rolled back in place (same inodes); then the backing's
// entries are swapped for the rebuilt ones.
func (t *tracker) rollback() (CutReport, error) {
	t.ns.Lock()
	defer t.ns.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	rep := CutReport{WritesRefused: t.refused}
	where, err := t.locate()
	if err != nil {
		return rep, err
	}
	staging := filepath.Join(t.attic, "rebuild")
	if err := os.Mkdir(staging, 0o700); err != nil {
		return rep, fmt.Errorf("power cut: %w", err)
	}
	var rootSt syscall.Stat_t
	if err := syscall.Lstat(t.backing, &rootSt); err != nil {
		return rep, fmt.Errorf("power cut: %w", err)
	}
	b := rebuild{t: t, where: where, visited: map[uint64]bool{}, linked: map[uint64]bool{}}
	b.dir(rootSt.Ino, t.backing, staging)
	rep.NamesUndone = b.namesUndone
	errs := b.errs
	for ino, u := range t.files {
		rep.BytesDiscarded += u.written
		p, ok := where[ino]
		if !ok || !b.linked[ino] {
			continue // its name did not survive: nothing left to roll back
		}
		if err := restore(p, u); err != nil {
			errs = append(errs, fmt.Errorf("roll back inode %d: %w", ino, err))
			continue
		}
		rep.FilesRolledBack++
	}
	if err := swapIn(t.backing, staging, filepath.Join(t.attic, "old")); err != nil {
		errs = append(errs, err)
	}
	t.reset()
	t.refused = 0
	errs = append(errs, emptyAttic(t.attic))
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("power cut: %w", err)
	}
	return rep, nil
}

// locate finds a present path of every inode in the backing and the attic.
func (t *tracker) locate() (map[uint64]string, error) {
	where := map[uint64]string{}
	for _, root := range []string{t.backing, t.attic} {
		err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			if _, seen := where[st.Ino]; !seen {
				where[st.Ino] = p
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("power cut: find the surviving files: %w", err)
		}
	}
	return where, nil
}

type rebuild struct {
	t           *tracker
	where       map[uint64]string
	visited     map[uint64]bool // directories already rebuilt (no cycles)
	linked      map[uint64]bool // inodes the rebuilt tree names
	namesUndone int
	errs        []error
}

// dir rebuilds directory ino, present at src ("" if it is gone), at dst.
func (b *rebuild) dir(ino uint64, src, dst string) {
	if b.visited[ino] {
		return
	}
	b.visited[ino] = true
	list, snapshotted := b.t.dirs[ino]
	if src != "" {
		live, err := listDir(src)
		if err != nil {
			b.errs = append(b.errs, err)
		}
		if !snapshotted {
			list = live
		} else {
			b.namesUndone += changedNames(list, live)
		}
	}
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := list[name]
		to := filepath.Join(dst, name)
		from, present := b.where[e.ino]
		if e.isDir() {
			if err := makeDir(to, e); err != nil {
				b.errs = append(b.errs, err)
				continue
			}
			if !present {
				from = ""
			}
			b.dir(e.ino, from, to)
			continue
		}
		if !present {
			b.errs = append(b.errs, fmt.Errorf("%s: its inode %d is nowhere", to, e.ino))
			continue
		}
		if err := unix.Linkat(unix.AT_FDCWD, from, unix.AT_FDCWD, to, 0); err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		b.linked[e.ino] = true
	}
}

// changedNames counts the names that differ between a durable listing and
// the live one: made, removed, or naming another inode.
func changedNames(durable, live map[string]entry) int {
	n := 0
	for name, e := range durable {
		if l, ok := live[name]; !ok || l.ino != e.ino {
			n++
		}
	}
	for name := range live {
		if _, ok := durable[name]; !ok {
			n++
		}
	}
	return n
}

func makeDir(p string, e entry) error {
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	if err := os.Lchown(p, int(e.uid), int(e.gid)); err != nil {
		return err
	}
	return syscall.Chmod(p, e.mode&0o7777)
}

// restore brings a file's bytes back to their last fsync.
func restore(p string, u *fileUndo) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil // the inode number now names no file of ours
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for b, data := range u.saved {
		if _, err := f.WriteAt(data, b*blockSize); err != nil {
			f.Close()
			return err
		}
	}
	err = f.Truncate(u.durableSize)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// swapIn replaces dir's entries with staging's, moving the old ones to old.
func swapIn(dir, staging, old string) error {
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := moveEntries(dir, old); err != nil {
		return err
	}
	return moveEntries(staging, dir)
}

// moveEntries renames every entry of from into to.
func moveEntries(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, de := range entries {
		if err := os.Rename(filepath.Join(from, de.Name()), filepath.Join(to, de.Name())); err != nil {
			return err
		}
	}
	return nil
}
