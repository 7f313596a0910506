package powercut

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/server/servertest"
)

// mountT mounts a fresh backing dir for a test, unmounted in t.Cleanup.
// Without /dev/fuse or root the test FAILS saying what is needed: a
// skipped power cut would pass CI without ever cutting anything.
func mountT(t testing.TB) (*FS, string) {
	t.Helper()
	if err := requireFUSE(); err != nil {
		t.Fatal(err)
	}
	base := servertest.BaseDir(t) // searchable by a server's unprivileged account
	backing, mp := filepath.Join(base, "backing"), filepath.Join(base, "mnt")
	for _, d := range []string{backing, mp} {
		if err := os.Mkdir(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Mount(context.Background(), backing, mp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.Unmount(ctx); err != nil {
			t.Errorf("unmount: %v", err)
		}
		if _, err := os.Stat(f.attic); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the attic %s is left after Unmount: %v", f.attic, err)
		}
	})
	return f, mp
}

// cut cuts the power and mounts what survived.
func cut(t testing.TB, f *FS) CutReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := f.Cut(ctx)
	if err != nil {
		t.Fatalf("cut: %v", err)
	}
	if err := f.Remount(ctx); err != nil {
		t.Fatalf("remount: %v", err)
	}
	return rep
}

func fsyncPath(t testing.TB, p string) {
	t.Helper()
	fd, err := syscall.Open(p, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Fsync(fd); err != nil {
		t.Fatalf("fsync %s: %v", p, err)
	}
}

func writeFile(t testing.TB, p, content string, fsync bool) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// content reads p; "<absent>" when it does not exist.
func content(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// durableFile makes p with content, all of it durable.
func durableFile(t testing.TB, f *FS, p, content string) {
	t.Helper()
	writeFile(t, p, content, true)
	if err := f.SyncAll(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteIsDurableAfterFsync(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "data")
	durableFile(t, f, p, "")

	writeFile(t, p, "lost", false)
	rep := cut(t, f)
	if got := content(t, p); got != "" {
		t.Errorf("a write without fsync: after the cut %q, want the empty durable file", got)
	}
	if rep.FilesRolledBack != 1 || rep.BytesDiscarded != 4 {
		t.Errorf("report %+v, want 1 file rolled back, 4 bytes discarded", rep)
	}

	writeFile(t, p, "kept", true)
	cut(t, f)
	if got := content(t, p); got != "kept" {
		t.Errorf("a write with fsync: after the cut %q, want %q", got, "kept")
	}
}

// An overwrite in the middle of a durable file comes back block by block.
func TestOverwriteRollsBackToDurableBytes(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "data")
	old := strings.Repeat("0123456789abcdef", 1000) // 16000 bytes: 4 blocks
	durableFile(t, f, p, old)

	h, err := os.OpenFile(p, os.O_WRONLY, 0) // write-only: the undo reads through its own fd
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt(bytes.Repeat([]byte("X"), 5000), 3000); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("tail"), 20000); err != nil {
		t.Fatal(err)
	}
	h.Close()
	cut(t, f)
	if got := content(t, p); got != old {
		t.Errorf("after the cut %d bytes, equal to the durable ones: %v", len(got), got == old)
	}
}

func TestNewNameIsDurableAfterDirFsync(t *testing.T) {
	f, mp := mountT(t)
	dir := filepath.Join(mp, "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.SyncAll(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "new")
	writeFile(t, p, "data", true) // the file's fsync does not make its name durable
	rep := cut(t, f)
	if got := content(t, p); got != "<absent>" {
		t.Errorf("a new file, its directory not fsynced: after the cut %q, want it gone", got)
	}
	if rep.NamesUndone != 1 {
		t.Errorf("report %+v, want 1 name undone", rep)
	}

	writeFile(t, p, "data", true)
	fsyncPath(t, dir)
	cut(t, f)
	if got := content(t, p); got != "data" {
		t.Errorf("a new file, its directory fsynced: after the cut %q, want %q", got, "data")
	}

	// A new directory needs its parent's fsync, and its files its own.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "f"), "x", true)
	fsyncPath(t, dir)
	cut(t, f)
	if _, err := os.Stat(sub); err != nil {
		t.Errorf("a directory whose parent was fsynced: %v", err)
	}
	if got := content(t, filepath.Join(sub, "f")); got != "<absent>" {
		t.Errorf("a file in it, the new directory not fsynced: %q, want it gone", got)
	}
}

func TestUnlinkIsDurableAfterDirFsync(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "doomed")
	durableFile(t, f, p, "durable")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	cut(t, f)
	if got := content(t, p); got != "durable" {
		t.Errorf("an unlink, the directory not fsynced: after the cut %q, want the file back", got)
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, mp)
	if left := atticInodes(t, f); len(left) != 0 {
		t.Errorf("the attic still holds %v after the directory's fsync", left)
	}
	cut(t, f)
	if got := content(t, p); got != "<absent>" {
		t.Errorf("an unlink, the directory fsynced: after the cut %q, want it gone", got)
	}
}

func atticInodes(t testing.TB, f *FS) []string {
	t.Helper()
	des, err := os.ReadDir(f.attic)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		if de.Name() != markerName {
			names = append(names, de.Name())
		}
	}
	return names
}

// The write-temp-then-rename idiom is durable only with the directory's
// fsync after the rename.
func TestRenameIsDurableAfterDirFsync(t *testing.T) {
	for _, dirFsync := range []bool{false, true} {
		t.Run(map[bool]string{false: "without dir fsync", true: "with dir fsync"}[dirFsync], func(t *testing.T) {
			f, mp := mountT(t)
			p, tmp := filepath.Join(mp, "config"), filepath.Join(mp, "config.tmp")
			durableFile(t, f, p, "old")
			writeFile(t, tmp, "new", true)
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
			if dirFsync {
				fsyncPath(t, mp)
			}
			rep := cut(t, f)
			want := map[bool]string{false: "old", true: "new"}[dirFsync]
			if got := content(t, p); got != want {
				t.Errorf("after the cut %q, want %q", got, want)
			}
			if got := content(t, tmp); got != "<absent>" {
				t.Errorf("the temp name after the cut: %q, want it absent", got)
			}
			if !dirFsync && rep.NamesUndone != 1 {
				t.Errorf("report %+v, want 1 name undone (config back to its old inode)", rep)
			}
		})
	}
}

func TestOSyncWritesAreDurable(t *testing.T) {
	for _, flag := range []int{os.O_SYNC, syscall.O_DSYNC} {
		f, mp := mountT(t)
		p := filepath.Join(mp, "log")
		durableFile(t, f, p, "")
		h, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range []string{"one\n", "two\n"} {
			if _, err := h.WriteString(rec); err != nil {
				t.Fatal(err)
			}
		}
		h.Close()
		cut(t, f)
		if got := content(t, p); got != "one\ntwo\n" {
			t.Errorf("open flag %#o: after the cut %q, want both records", flag, got)
		}
	}
}

func TestTruncateIsDurableAfterFsync(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "data")
	old := strings.Repeat("x", 10000)
	durableFile(t, f, p, old)

	truncates := map[string]func() error{
		"truncate(2)":  func() error { return os.Truncate(p, 5000) },
		"O_TRUNC":      func() error { h, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0); h.Close(); return err },
		"ftruncate(2)": func() error { h, err := os.OpenFile(p, os.O_WRONLY, 0); _ = h.Truncate(1); h.Close(); return err },
		"extend":       func() error { return os.Truncate(p, 20000) },
	}
	for name, do := range truncates {
		if err := do(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cut(t, f)
		if got := content(t, p); got != old {
			t.Errorf("%s without fsync: after the cut %d bytes, want the durable %d", name, len(got), len(old))
		}
	}

	h, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if err := h.Sync(); err != nil {
		t.Fatal(err)
	}
	h.Close()
	cut(t, f)
	if got := content(t, p); got != "xxx" {
		t.Errorf("ftruncate with fsync: after the cut %q, want %q", got, "xxx")
	}
}

// A clean unmount keeps everything, fsynced or not, as a clean shutdown.
func TestUnmountKeepsEverything(t *testing.T) {
	f, mp := mountT(t)
	writeFile(t, filepath.Join(mp, "a"), "kept", false)
	ctx := context.Background()
	if err := f.Unmount(ctx); err != nil {
		t.Fatal(err)
	}
	if got := content(t, filepath.Join(f.backing, "a")); got != "kept" {
		t.Errorf("after a clean unmount the backing holds %q, want %q", got, "kept")
	}
	if _, err := f.Cut(ctx); err == nil || !strings.Contains(err.Error(), "unmounted cleanly") {
		t.Errorf("Cut after a clean Unmount: %v, want it refused", err)
	}
	if err := f.Remount(ctx); err != nil {
		t.Fatal(err)
	}
}

// A write whose undo would pass the budget is refused, not kept without
// its undo, and the cut says so.
func TestUndoBudgetRefusesWrites(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "data")
	durableFile(t, f, p, strings.Repeat("d", 4*blockSize))
	if _, err := f.call(context.Background(), request{Op: opMaxUndo, MaxUndo: 2 * blockSize}); err != nil {
		t.Fatal(err)
	}
	h, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.WriteAt(bytes.Repeat([]byte("n"), 2*blockSize), 0); err != nil {
		t.Fatalf("a write within the budget: %v", err)
	}
	if _, err := h.WriteAt([]byte("n"), 3*blockSize); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write past the budget: %v, want ENOSPC", err)
	}
	h.Close()
	rep := cut(t, f)
	if rep.WritesRefused != 1 {
		t.Errorf("report %+v, want 1 write refused", rep)
	}
	if got := content(t, p); got != strings.Repeat("d", 4*blockSize) {
		t.Errorf("after the cut the file is not its durable self")
	}
}

// Cut takes the mount away even from a process that still has a file open
// on it (a survivor the caller failed to kill), and rolls back all the same.
func TestCutWithFilesStillOpen(t *testing.T) {
	f, mp := mountT(t)
	p := filepath.Join(mp, "data")
	durableFile(t, f, p, "durable")
	h, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.WriteAt([]byte("LOST"), 0); err != nil {
		t.Fatal(err)
	}
	cut(t, f)
	if got := content(t, p); got != "durable" {
		t.Errorf("after the cut %q, want %q", got, "durable")
	}
}

func TestMountRefusesBadDirs(t *testing.T) {
	if err := requireFUSE(); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(base, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ backing, mp, want string }{
		{filepath.Join(base, "missing"), inner, "backing"},
		{base, filepath.Join(base, "missing"), "mountpoint"},
		{file, inner, "not a directory"},
		{base, inner, "one inside the other"},
		{inner, base, "one inside the other"},
		{base, base, "one inside the other"},
	} {
		f, err := Mount(context.Background(), c.backing, c.mp)
		if err == nil {
			f.Unmount(context.Background())
			t.Errorf("Mount(%s, %s) accepted", c.backing, c.mp)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Mount(%s, %s): %q, want one line saying %q", c.backing, c.mp, err, c.want)
		}
	}
}

// A process's POSIX locks are its own, whatever descriptor took them
// (fcntl(2)): SQLite relies on it, several connections of one process
// sharing the locks of one file. Forwarded to the loopback, they became
// OFD locks, one per descriptor, and the process blocked on itself.
func TestPOSIXLocksBelongToTheProcess(t *testing.T) {
	_, mp := mountT(t)
	p := filepath.Join(mp, "db")
	writeFile(t, p, "x", false)
	var fds [2]*os.File
	for i := range fds {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fds[i] = f
	}
	lock := func(f *os.File, typ int16) error {
		return unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 1})
	}
	if err := lock(fds[0], unix.F_WRLCK); err != nil {
		t.Fatal(err)
	}
	if err := lock(fds[1], unix.F_WRLCK); err != nil {
		t.Errorf("a second descriptor of the process that holds the write lock: %v; want the lock (it is the process's)", err)
	}
}
