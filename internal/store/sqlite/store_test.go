package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func open(t testing.TB, cfg Config) *Store {
	if cfg.Namespace == "" {
		cfg.Namespace = storetest.Namespace(t)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// rawDB opens the file outside any store, as a foreign user would.
func rawDB(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite3", path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestKV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	// The parallel subtests share the file. A table of someone else's from
	// the start keeps a closing store from removing the file under the others
	// (it removes a file it created only when nothing else is left in it).
	if _, err := rawDB(t, path).Exec(`CREATE TABLE someone_elses (x)`); err != nil {
		t.Fatal(err)
	}
	storetest.RunKVOptions(t, func(t *testing.T) store.Store { return open(t, Config{Path: path}) }, storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			db := rawDB(t, path)
			// A table named like a namespace's, but not recorded as ours.
			name := storetest.Namespace(t) + "_kv"
			if _, err := db.Exec(`CREATE TABLE "` + name + `" (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO "`+name+`" VALUES (?, ?)`, []byte("k"), []byte("v")); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				var v []byte
				if err := rawDB(t, path).QueryRow(`SELECT v FROM "` + name + `"`).Scan(&v); err != nil || string(v) != "v" {
					t.Errorf("foreign table %s: %q, %v", name, v, err)
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			var n int
			if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, info.Namespace+"_kv").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		},
	})
}

func TestPragmasReadBack(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		cfg         Config
		journal     string
		synchronous string
	}{
		{Config{}, "WAL", "NORMAL"},
		{Config{JournalMode: "delete", Synchronous: "full", BusyTimeout: time.Second}, "DELETE", "FULL"},
		{Config{JournalMode: "WAL", Synchronous: "OFF"}, "WAL", "OFF"},
	} {
		c.cfg.Path = filepath.Join(dir, c.journal+c.synchronous+".db")
		s := open(t, c.cfg)
		info, err := s.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Settings["journal_mode"] != c.journal || info.Settings["synchronous"] != c.synchronous {
			t.Errorf("%+v: read back journal_mode=%s synchronous=%s", c.cfg, info.Settings["journal_mode"], info.Settings["synchronous"])
		}
		if c.cfg.BusyTimeout == time.Second && info.Settings["busy_timeout"] != "1000" {
			t.Errorf("busy_timeout = %s, want 1000", info.Settings["busy_timeout"])
		}
		if info.Durability != Durability(c.journal, c.synchronous) || info.Version == "" {
			t.Errorf("info = %+v", info)
		}
	}
}

func TestOwnership(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "own.db")
	db := rawDB(t, path)
	if _, err := db.Exec(`CREATE TABLE "sb_taken_kv" (k BLOB)`); err != nil {
		t.Fatal(err)
	}
	_, err := New(ctx, Config{Path: path, Namespace: "sb_taken"})
	storetest.ErrIs(t, err, store.ErrNotOwned)

	// A store whose ownership row disappears refuses to drop its table.
	s, err := New(ctx, Config{Path: path, Namespace: "sb_mine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM storebench_owned WHERE name = 'sb_mine_kv'`); err != nil {
		t.Fatal(err)
	}
	storetest.ErrIs(t, s.Reset(ctx), store.ErrNotOwned)
	storetest.ErrIs(t, s.Close(ctx), store.ErrNotOwned)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('sb_mine_kv', 'sb_taken_kv')`).Scan(&n); err != nil || n != 2 {
		t.Errorf("tables left: %d, %v; want both", n, err)
	}
}

func TestCloseRemovesCreatedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	s := open(t, Config{Path: path})
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database file left behind: %v", err)
	}
}

func BenchmarkGet(b *testing.B) {
	storetest.BenchGet(b, open(b, Config{Path: filepath.Join(b.TempDir(), "b.db")}))
}

func BenchmarkSet(b *testing.B) {
	storetest.BenchSet(b, open(b, Config{Path: filepath.Join(b.TempDir(), "b.db")}))
}
