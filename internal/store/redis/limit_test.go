package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestValueLongerThanProtoMaxBulkLen: a value Redis would not accept (it
// closes the connection, "connection reset by peer") is refused before it
// is sent, naming the server's limit, on every path that writes a value;
// where CONFIG GET is not allowed the error says what the likely cause was.
func TestValueLongerThanProtoMaxBulkLen(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Redis, server.Options{})
	admin := raw(t, srv.URL)
	// 1 MiB, the least Redis allows, stands for the default 512 MiB.
	for _, cmd := range [][]string{
		{"CONFIG", "SET", "proto-max-bulk-len", "1048576"},
		{"ACL", "SETUSER", "sbt_noconfig", "on", ">Pw-123456", "~*", "&*", "+@all", "-config"},
	} {
		if err := admin.Do(ctx, admin.B().Arbitrary(cmd...).Build()).Error(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	long := make([]byte, 1<<20+1)

	s := open(t, srv.URL)
	kv := storetest.KVClient(t, s)
	pr := perRequest(t, s)
	sc, err := s.OpenSessions(ctx, store.SessionDesign{TTL: 60e9})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for name, write := range map[string]func() error{
		"set": func() error { return kv.Set(ctx, []byte("k"), long, 0) },
		"set batch": func() error {
			return kv.(store.Batcher).SetBatch(ctx, [][]byte{[]byte("a"), []byte("b")}, [][]byte{[]byte("v"), long}, 0)
		},
		"per-request set": func() error { return pr.Set(ctx, []byte("k"), long, 0) },
		"create session":  func() error { _, err := sc.Create(ctx, 1, long); return err },
	} {
		err := write()
		if err == nil || !strings.Contains(err.Error(), "proto-max-bulk-len (1048576 bytes)") {
			t.Errorf("%s: %v, want the server's proto-max-bulk-len named", name, err)
		}
	}
	// Refused before it was sent: the connection is still good.
	if err := kv.Set(ctx, []byte("k"), long[:1<<20], 0); err != nil {
		t.Errorf("a value of exactly the limit after a refused one: %v", err)
	}

	noConfig := open(t, strings.Replace(srv.URL, "redis://", "redis://sbt_noconfig:Pw-123456@", 1))
	err = storetest.KVClient(t, noConfig).Set(ctx, []byte("k"), long, 0)
	if err == nil || !strings.Contains(err.Error(), "proto-max-bulk-len") || !strings.Contains(err.Error(), "CONFIG GET was not allowed") {
		t.Errorf("without CONFIG: %v, want the likely cause named", err)
	}
	t.Log(err)
}
