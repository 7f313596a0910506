package redis

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
)

// perRequest opens a per-request client of s.
func perRequest(t *testing.T, s *Store) store.KV {
	t.Helper()
	c, err := s.OpenPerRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(store.KV)
}

// commandsProcessed is the server's total_commands_processed (INFO stats),
// which counts the INFO that reads it.
func commandsProcessed(t *testing.T, s *Store) int64 {
	t.Helper()
	raw, err := s.admin.Do(context.Background(), s.admin.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(raw, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no total_commands_processed in INFO stats:\n%s", raw)
	return 0
}

func TestPerRequest(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{}).URL
	ctx := context.Background()

	t.Run("TheCommandAlone", func(t *testing.T) {
		// rueidis would add a HELLO before the GET and a PING before the
		// close: what an application connecting per request does not pay.
		s := open(t, url)
		before := commandsProcessed(t, s)
		if _, ok, err := perRequest(t, s).Get(ctx, []byte("alone"), nil); err != nil || ok {
			t.Fatalf("get of a missing key: ok %v, %v", ok, err)
		}
		if err := perRequest(t, s).Set(ctx, []byte("alone"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		if got := commandsProcessed(t, s) - before; got != 3 {
			t.Errorf("the server processed %d commands for a per-request GET, a per-request SET and an INFO, want 3", got)
		}
	})

	t.Run("OneCommandPerConnection", func(t *testing.T) {
		kv := perRequest(t, open(t, url))
		if err := kv.Set(ctx, []byte("once"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := kv.Get(ctx, []byte("once"), nil); !errors.Is(err, errUsed) {
			t.Errorf("second command on a per-request connection: %v, want %v", err, errUsed)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		// BLPOP on an empty list blocks on the server: only a deadline
		// ends the exchange.
		c, err := open(t, url).OpenPerRequest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		_, _, err = c.(*oneShot).exchange(dctx, nil, []byte("BLPOP"), []byte(KeyPrefix+"empty"), []byte("0"))
		if took := time.Since(t0); err == nil || errclass.Classify(err) != errclass.ClassTimeout || took > 2*time.Second {
			t.Errorf("a blocked exchange under a 100 ms deadline: %v (class %s) after %v, want a timeout soon after 100 ms", err, errclass.Classify(err), took)
		}
	})

	t.Run("ErrorReply", func(t *testing.T) {
		s := open(t, url)
		key := s.prefix + "list"
		if err := s.admin.Do(ctx, s.admin.B().Rpush().Key(key).Element("x").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		_, _, err := perRequest(t, s).Get(ctx, []byte("list"), nil)
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || errclass.Classify(err) != errclass.ClassOther {
			t.Errorf("GET of a list: %v (class %s), want a WRONGTYPE error of class %s", err, errclass.Classify(err), errclass.ClassOther)
		}
		// The next request is unaffected: the reply was read whole.
		if err := perRequest(t, s).Set(ctx, []byte("after"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("BinaryValues", func(t *testing.T) {
		s := open(t, url)
		for _, v := range [][]byte{{}, []byte("\r\n$-1\r\n"), bytes.Repeat([]byte("\x00\r\n*"), 64<<10)} {
			if err := perRequest(t, s).Set(ctx, []byte("bin"), v, 0); err != nil {
				t.Fatal(err)
			}
			got, ok, err := perRequest(t, s).Get(ctx, []byte("bin"), []byte("old"))
			if err != nil || !ok || !bytes.Equal(got, v) {
				t.Fatalf("%d-byte value read back as %d bytes, ok %v, %v", len(v), len(got), ok, err)
			}
		}
	})

	t.Run("URLDatabase", func(t *testing.T) {
		s := open(t, url+"/3")
		if err := perRequest(t, s).Set(ctx, []byte("db"), []byte("three"), 0); err != nil {
			t.Fatal(err)
		}
		if v, err := s.admin.Do(ctx, s.admin.B().Get().Key(s.prefix+"db").Build()).ToString(); err != nil || v != "three" {
			t.Errorf("the store's own client in db 3 read %q, %v", v, err)
		}
		db0 := open(t, url)
		if n, err := db0.admin.Do(ctx, db0.admin.B().Exists().Key(s.prefix+"db").Build()).AsInt64(); err != nil || n != 0 {
			t.Errorf("the key is in db 0 too (%d, %v): SELECT was not sent", n, err)
		}
	})

	t.Run("URLPassword", func(t *testing.T) {
		srv := servertest.Start(t, server.Redis, server.Options{})
		s := open(t, srv.URL)
		if err := s.admin.Do(ctx, s.admin.B().ConfigSet().ParameterValue().ParameterValue("requirepass", "sekret").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		authed := strings.Replace(srv.URL, "redis://", "redis://:sekret@", 1)
		if err := perRequest(t, open(t, authed)).Set(ctx, []byte("pw"), []byte("v"), 0); err != nil {
			t.Errorf("with the password: %v", err)
		}
		// New would fail on a wrong password: give a good store's
		// per-request connections a wrong one.
		ws := open(t, authed)
		ws.preamble, ws.preambleReplies = preambleOf("", "wrong", 0)
		if err := perRequest(t, ws).Set(ctx, []byte("pw"), []byte("v"), 0); err == nil || !strings.Contains(err.Error(), "AUTH") {
			t.Errorf("with a wrong password: %v, want an error that names AUTH", err)
		}
	})
}

func TestReplyClass(t *testing.T) {
	for msg, want := range map[string]errclass.Class{
		"LOADING Redis is loading the dataset in memory":                    errclass.ClassUnavailable,
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data":  errclass.ClassUnavailable,
		"READONLY You can't write against a read only replica.":             errclass.ClassUnavailable,
		"CLUSTERDOWN The cluster is down":                                   errclass.ClassUnavailable,
		"BUSY Redis is busy running a script.":                              errclass.ClassTimeout,
		"WRONGTYPE Operation against a key holding the wrong kind of value": errclass.ClassOther,
		"ERR unknown command":                                               errclass.ClassOther,
	} {
		if got := errclass.Classify(opErr("get", &replyError{msg: msg})); got != want {
			t.Errorf("%q: class %s, want %s", msg, got, want)
		}
	}
}
