package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.db")
	// Someone else's table keeps the parallel stores' file (as TestKV).
	if _, err := rawDB(t, path).Exec(`CREATE TABLE someone_elses (x)`); err != nil {
		t.Fatal(err)
	}
	storetest.RunRecords(t, func(t *testing.T) store.Store { return open(t, Config{Path: path}) }, nil)
}

// tableCount is how many tables of name the file at path holds.
func tableCount(t *testing.T, path, name string) int {
	t.Helper()
	var n int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRecordsTableIsOwned: the records table is recorded as storebench's,
// so Close drops it and clean drops one a kept run left; one that is not
// recorded is refused, never dropped.
func TestRecordsTableIsOwned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "owned.db")
	if _, err := rawDB(t, path).Exec(`CREATE TABLE someone_elses (x)`); err != nil {
		t.Fatal(err)
	}
	fields := []string{"field0", "field1"}

	s := open(t, Config{Path: path})
	name := s.cfg.Namespace + "_usertable"
	storetest.RecordsConn(t, s, fields).Close()
	if tableCount(t, path, name) != 1 {
		t.Fatalf("no table %s after RecordsSetup", name)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, path, name); n != 0 {
		t.Errorf("table %s left after Close", name)
	}

	kept := open(t, Config{Path: path})
	name = kept.cfg.Namespace + "_usertable"
	storetest.RecordsConn(t, kept, fields).Close()
	if err := kept.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if ns, err := Namespaces(ctx, path); err != nil || len(ns) != 1 || ns[0] != kept.cfg.Namespace {
		t.Fatalf("Namespaces = %v, %v; want the kept run's", ns, err)
	}
	if err := DropNamespace(ctx, path, kept.cfg.Namespace); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, path, name); n != 0 {
		t.Errorf("table %s left after DropNamespace", name)
	}

	foreign := open(t, Config{Path: path})
	if _, err := rawDB(t, path).Exec(`CREATE TABLE "` + foreign.cfg.Namespace + `_usertable" (x)`); err != nil {
		t.Fatal(err)
	}
	if _, err := foreign.RecordsSetup(ctx, fields); !errors.Is(err, store.ErrNotOwned) {
		t.Errorf("RecordsSetup over a foreign table: %v, want ErrNotOwned", err)
	}
	if err := foreign.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, path, foreign.cfg.Namespace+"_usertable"); n != 1 {
		t.Errorf("a foreign table was dropped")
	}
}
