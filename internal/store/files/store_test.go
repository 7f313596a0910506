package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func open(t testing.TB, dir string, fsync bool) *Store {
	s, err := New(context.Background(), Config{Dir: dir, Namespace: storetest.Namespace(t), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func suiteOptions(dir string) storetest.Options {
	return storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			// A sibling file and a look-alike directory without the marker.
			sib := filepath.Join(dir, "foreign.txt")
			other := filepath.Join(dir, "sbt_foreign", "00")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{sib, filepath.Join(other, "kYQ")} {
				if err := os.WriteFile(p, []byte("not ours"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return func(t *testing.T) {
				for _, p := range []string{sib, filepath.Join(other, "kYQ")} {
					if b, err := os.ReadFile(p); err != nil || string(b) != "not ours" {
						t.Errorf("foreign file %s: %q, %v", p, b, err)
					}
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			_, err := os.Stat(info.Location)
			return err == nil
		},
	}
}

func TestKV(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		name := "nofsync"
		if fsync {
			name = "fsync"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			storetest.RunKVOptions(t, func(t *testing.T) store.Store { return open(t, dir, fsync) }, suiteOptions(dir))
		})
	}
}

func TestRefusesUnmarkedDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sb_taken"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := New(ctx, Config{Dir: dir, Namespace: "sb_taken"})
	storetest.ErrIs(t, err, store.ErrNotOwned)

	// A store whose marker disappears refuses to remove its directory.
	s, err := New(ctx, Config{Dir: dir, Namespace: "sb_mine"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sb_mine", Marker)); err != nil {
		t.Fatal(err)
	}
	storetest.ErrIs(t, s.Reset(ctx), store.ErrNotOwned)
	storetest.ErrIs(t, s.Close(ctx), store.ErrNotOwned)
	if _, err := os.Stat(filepath.Join(dir, "sb_mine", "00")); err != nil {
		t.Errorf("unmarked directory was removed: %v", err)
	}
}

func TestReuseMarkedDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(ctx, Config{Dir: dir, Namespace: "sb_again"})
	if err != nil {
		t.Fatal(err)
	}
	kv := storetest.KVClient(t, s)
	if err := kv.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	// A second store on a marked leftover starts empty.
	s2, err := New(ctx, Config{Dir: dir, Namespace: "sb_again"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close(ctx)
	if _, ok, err := storetest.KVClient(t, s2).Get(ctx, []byte("k"), nil); ok || err != nil {
		t.Fatalf("leftover key visible: %v %v", ok, err)
	}
}

func TestExpiryInMtime(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), false)
	kv := storetest.KVClient(t, s).(*Client)
	if err := kv.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, []byte("forever"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	stat := func(key string) time.Time {
		h := uint32(2166136261)
		for _, b := range []byte(key) {
			h = (h ^ uint32(b)) * 16777619
		}
		_, name := kv.fileName([]byte(key))
		sub := []byte{byte(h ^ h>>8 ^ h>>16 ^ h>>24)}
		fi, err := os.Stat(filepath.Join(s.dir, string("0123456789abcdef"[sub[0]>>4])+string("0123456789abcdef"[sub[0]&15]), name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	if d := time.Until(stat("k")); d < 59*time.Minute || d > time.Hour {
		t.Errorf("mtime of a 1 h key is %v away", d)
	}
	if y := stat("forever").Year(); y < 2038 {
		t.Errorf("mtime of a key without expiry is in %d", y)
	}
}

// Info records the fsync option as ParseFsync reads it back, so a writer
// process attached from it syncs as the store does.
func TestInfoRecordsFsync(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"false", "true", FsyncFileOnly} {
		fsync, noDir, err := ParseFsync(v)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(ctx, Config{Dir: t.TempDir(), Namespace: storetest.Namespace(t), Fsync: fsync, NoDirFsync: noDir})
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Settings["fsync"]; got != v {
			t.Errorf("fsync %s: Info records %q", v, got)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) { storetest.BenchGet(b, open(b, b.TempDir(), false)) }
func BenchmarkSet(b *testing.B) {
	b.Run("nofsync", func(b *testing.B) { storetest.BenchSet(b, open(b, b.TempDir(), false)) })
	b.Run("fsync", func(b *testing.B) { storetest.BenchSet(b, open(b, b.TempDir(), true)) })
}

// Reset frees no inode: the files go to the trash (the same inodes), and
// Close removes the trash with the namespace.
func TestResetMovesFilesAside(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), false)
	kv := storetest.KVClient(t, s)
	if err := kv.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	var before unix.Stat_t
	dirfd, name := kv.(*Client).fileName([]byte("k"))
	if err := unix.Fstatat(dirfd, name, &before, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	var inTrash []uint64
	err := filepath.WalkDir(filepath.Join(s.dir, trashDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return err
		}
		inTrash = append(inTrash, st.Ino)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inTrash) != 1 || inTrash[0] != before.Ino {
		t.Fatalf("after Reset the trash holds inodes %v, want the key's file (inode %d)", inTrash, before.Ino)
	}
	if _, ok, err := kv.Get(ctx, []byte("k"), nil); ok || err != nil {
		t.Fatalf("key visible after Reset: %v %v", ok, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("namespace (with its trash) left after Close: %v", err)
	}
}

// The result records the mount's options, and for ext4 whether it has a
// journal (see moveAside).
func TestInfoRecordsTheMount(t *testing.T) {
	s := open(t, t.TempDir(), false)
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set := info.Settings
	if runtime.GOOS == "linux" && set["mount_options"] == "" {
		t.Errorf("no mount_options in %v", set)
	}
	if set["filesystem"] == "ext2/3/4" && set["journal"] != "none" && set["journal"] != "yes" {
		t.Errorf("ext4 without journal: none or yes in %v", set)
	}
	if set["reset"] == "" {
		t.Errorf("no reset in %v", set)
	}
}
