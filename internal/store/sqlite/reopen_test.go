package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestAttach(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	ns := storetest.Namespace(t)
	s, err := New(ctx, Config{Path: path, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	kv := storetest.KVClient(t, s)
	if err := kv.Set(ctx, []byte("before"), []byte("v1"), 0); err != nil {
		t.Fatal(err)
	}
	a, err := Attach(ctx, Config{Path: path, Namespace: ns, Synchronous: "FULL"})
	if err != nil {
		t.Fatal(err)
	}
	akv := storetest.KVClient(t, a)
	got, ok, err := akv.Get(ctx, []byte("before"), nil)
	if err != nil || !ok || string(got) != "v1" {
		t.Fatalf("attached store reads %q %v %v, want the creator's row kept", got, ok, err)
	}
	if err := akv.Set(ctx, []byte("after"), []byte("v2"), 0); err != nil {
		t.Fatal(err)
	}
	info, err := a.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings["synchronous"] != "FULL" {
		t.Errorf("attached store synchronous = %s, want its own config's FULL", info.Settings["synchronous"])
	}
	if err := a.Reset(ctx); err == nil {
		t.Error("Reset of an attached store succeeded")
	}
	akv.(store.Client).Close()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for k, want := range map[string]string{"before": "v1", "after": "v2"} {
		got, ok, err := kv.Get(ctx, []byte(k), nil)
		if err != nil || !ok || string(got) != want {
			t.Errorf("after the attached store closed, %s = %q %v %v, want %q", k, got, ok, err, want)
		}
	}
}

func TestAttachRefusesForeign(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := New(ctx, Config{Path: path, Namespace: "sbt_ours"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE "sbt_theirs_kv" (k BLOB)`); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"sbt_theirs", "sbt_missing"} {
		if _, err := Attach(ctx, Config{Path: path, Namespace: ns}); !errors.Is(err, store.ErrNotOwned) {
			t.Errorf("Attach %s: %v, want ErrNotOwned", ns, err)
		}
	}
	if _, err := Attach(ctx, Config{Path: filepath.Join(t.TempDir(), "none.db"), Namespace: "sbt_ours"}); err == nil {
		t.Error("Attach on a missing file succeeded")
	}
}

// What the store says of itself is enough for another process to attach
// to it (the durability workload's writer).
func TestConfigOfInfo(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	ns := storetest.Namespace(t)
	s, err := New(ctx, Config{Path: path, Namespace: ns, JournalMode: "DELETE", Synchronous: "EXTRA"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ConfigOf(info)
	if err != nil || got.Path != path || got.Namespace != ns || got.JournalMode != "DELETE" || got.Synchronous != "EXTRA" || got.BusyTimeout <= 0 {
		t.Fatalf("ConfigOf(Info) = %+v, %v; want %s, %s, DELETE, EXTRA and the busy timeout", got, err, path, ns)
	}
	if _, err := ConfigOf(store.Info{Location: path}); err == nil {
		t.Error("ConfigOf an Info without a namespace: no error")
	}
}
