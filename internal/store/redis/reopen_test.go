package redis

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestReconnect kills and restarts the server under a store: after
// Reconnect its own connection works at once and the keys the server
// recovered (AOF, fsync always) are still read.
func TestReconnect(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Redis, server.Options{Profile: "aof-always"})
	s := open(t, srv.URL)
	kv := storetest.KVClient(t, s)
	if err := kv.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ServerTime(ctx); err != nil {
		t.Errorf("first admin command after Reconnect: %v", err)
	}
	got, ok, err := storetest.KVClient(t, s).Get(ctx, []byte("k"), nil)
	if err != nil || !ok || string(got) != "v" {
		t.Errorf("after the restart: %q %v %v, want the key kept", got, ok, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconnect(ctx); err == nil {
		t.Error("Reconnect of a closed store succeeded")
	}
}
