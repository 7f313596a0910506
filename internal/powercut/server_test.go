package powercut

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// powerCut kills s as a power loss would, cuts, remounts and restarts s on
// what survived.
func powerCut(t *testing.T, f *FS, s *server.Server) CutReport {
	t.Helper()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	rep := cut(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("restart after the cut: %v\n%s", err, s.LogTail(20))
	}
	return rep
}

// startOnMount starts a managed server whose data dir is on a fresh mount,
// its setup (data dir, config) made durable as if long ago.
func startOnMount(t *testing.T, k server.Kind, opts server.Options) (*FS, *server.Server) {
	t.Helper()
	f, mp := mountT(t)
	opts.BaseDir = mp
	s := servertest.Start(t, k, opts) // stopped before the unmount: cleanups run last first
	if err := f.SyncAll(); err != nil {
		t.Fatal(err)
	}
	return f, s
}

const redisKeys = 2000

func TestRedisThroughAPowerCut(t *testing.T) {
	for _, fsync := range []string{"always", "no"} {
		t.Run("appendfsync "+fsync, func(t *testing.T) {
			f, s := startOnMount(t, server.Redis, server.Options{Profile: "aof-always", Settings: map[string]string{"appendfsync": fsync}})
			if got := s.Settings["appendfsync"]; got != fsync {
				t.Fatalf("the server reads back appendfsync %q, want %q", got, fsync)
			}
			ctx := context.Background()
			acked := redisWrite(t, s)
			rep := powerCut(t, f, s)
			c := redisClient(t, s)
			lost := 0
			for i := range acked {
				v, err := c.Do(ctx, c.B().Get().Key("k"+strconv.Itoa(i)).Build()).ToString()
				if rueidis.IsRedisNil(err) || err == nil && v != strconv.Itoa(i) {
					lost++
				} else if err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("appendfsync %s: %d of %d acknowledged writes lost through the power cut (%+v)", fsync, lost, acked, rep)
			if fsync == "always" && lost != 0 {
				t.Errorf("appendfsync always lost %d acknowledged writes, want 0", lost)
			}
		})
	}
}

func redisClient(t *testing.T, s *server.Server) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// redisWrite sets k<i> = i one by one and returns how many were
// acknowledged.
func redisWrite(t *testing.T, s *server.Server) int {
	t.Helper()
	c := redisClient(t, s)
	defer c.Close()
	ctx := context.Background()
	for i := range redisKeys {
		if err := c.Do(ctx, c.B().Set().Key("k"+strconv.Itoa(i)).Value(strconv.Itoa(i)).Build()).Error(); err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
	}
	return redisKeys
}

// PostgreSQL starts on the mount (initdb included) and recovers after a
// cut: with synchronous_commit on no committed row is lost; with it off the
// last moments' commits may be (logged, not asserted: the WAL writer may
// have flushed them all).
func TestPostgresThroughAPowerCut(t *testing.T) {
	for _, profile := range []string{"default", "async-commit"} {
		t.Run(profile, func(t *testing.T) {
			f, s := startOnMount(t, server.Postgres, server.Options{Profile: profile})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const rows = 300
			pgInsert(ctx, t, s, rows)
			rep := powerCut(t, f, s)
			n := pgCount(ctx, t, s)
			t.Logf("PostgreSQL %s (synchronous_commit %s): %d of %d committed rows after the power cut (%+v)",
				profile, s.Settings["synchronous_commit"], n, rows, rep)
			if profile == "default" && n != rows {
				t.Errorf("%d of %d committed rows survived, want all", n, rows)
			}
			if rep.BytesDiscarded == 0 {
				t.Errorf("the cut discarded nothing (%+v): the server's unsynced writes did not go through the mount", rep)
			}
		})
	}
}

func pgInsert(ctx context.Context, t *testing.T, s *server.Server, rows int) {
	t.Helper()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE powercut (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if _, err := conn.Exec(ctx, "INSERT INTO powercut VALUES ($1)", i); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
}

// pgCount counts the rows that survived; a table lost whole counts 0.
func pgCount(ctx context.Context, t *testing.T, s *server.Server) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("connect after recovery: %v\n%s", err, s.LogTail(20))
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM powercut").Scan(&n)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0
	}
	if err != nil {
		t.Fatalf("after recovery: %v\n%s", err, s.LogTail(20))
	}
	return n
}
