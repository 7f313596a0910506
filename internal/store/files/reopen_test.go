package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestAttach(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, false)
	kv := storetest.KVClient(t, s)
	if err := kv.Set(ctx, []byte("before"), []byte("v1"), 0); err != nil {
		t.Fatal(err)
	}
	a, err := Attach(ctx, Config{Dir: dir, Namespace: s.cfg.Namespace, Fsync: true})
	if err != nil {
		t.Fatal(err)
	}
	akv := storetest.KVClient(t, a)
	got, ok, err := akv.Get(ctx, []byte("before"), nil)
	if err != nil || !ok || string(got) != "v1" {
		t.Fatalf("attached store reads %q %v %v, want the creator's key kept", got, ok, err)
	}
	if err := akv.Set(ctx, []byte("after"), []byte("v2"), 0); err != nil {
		t.Fatal(err)
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
	// Close kept everything: the creator still reads both keys.
	for k, want := range map[string]string{"before": "v1", "after": "v2"} {
		got, ok, err := kv.Get(ctx, []byte(k), nil)
		if err != nil || !ok || string(got) != want {
			t.Errorf("after the attached store closed, %s = %q %v %v, want %q", k, got, ok, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, s.cfg.Namespace, Marker)); err != nil {
		t.Errorf("marker gone after the attached store closed: %v", err)
	}
}

func TestAttachRefusesForeign(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sbt_foreign", "00"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Attach(context.Background(), Config{Dir: dir, Namespace: "sbt_foreign"})
	if !errors.Is(err, store.ErrNotOwned) {
		t.Fatalf("Attach on a directory without the marker: %v, want ErrNotOwned", err)
	}
	if _, err := Attach(context.Background(), Config{Dir: dir, Namespace: "sbt_missing"}); err == nil {
		t.Fatal("Attach on a missing namespace succeeded")
	}
}

// What the store says of itself is enough for another process to attach
// to it (the durability workload's writer).
func TestConfigOfInfo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Dir: dir, Namespace: storetest.Namespace(t), Fsync: true, NoDirFsync: true}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ConfigOf(info); err != nil || got != cfg {
		t.Fatalf("ConfigOf(Info) = %+v, %v; want %+v", got, err, cfg)
	}
	if _, err := ConfigOf(store.Info{Location: dir}); err == nil {
		t.Error("ConfigOf an Info without a namespace: no error")
	}
}
