package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// redisSet writes n keys through a raw connection and waits for every reply.
func redisSet(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := 0; i < n; i++ {
		fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$5\r\nvalue\r\n", len(fmt.Sprint(i))+1, i)
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "+OK") {
			t.Fatalf("SET: %q %v", line, err)
		}
	}
}

// filesSize sums the sizes of the files under dir whose name matches glob.
func filesSize(t *testing.T, dir, glob string) (total int64, n int) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if ok, _ := filepath.Match(glob, fi.Name()); ok {
				total += fi.Size()
				n++
			}
		}
		return nil
	})
	return total, n
}

// The profiles are not just names: their effect shows in the files the
// server writes and in the settings it reports.
func TestRedisProfilesTakeEffect(t *testing.T) {
	t.Run("aof-always grows the AOF with every SET", func(t *testing.T) {
		t.Parallel()
		s := servertest.Start(t, server.Redis, server.Options{Profile: "aof-always"})
		before, _ := filesSize(t, s.DataDir, "*.aof")
		redisSet(t, s.Addr, 100)
		after, n := filesSize(t, s.DataDir, "*.aof")
		if n == 0 || after-before < 100*20 {
			t.Fatalf("AOF files %d, grew %d bytes after 100 SETs, want ≥ 2000", n, after-before)
		}
	})
	t.Run("none writes no dump and no AOF, even on shutdown", func(t *testing.T) {
		t.Parallel()
		s := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
		redisSet(t, s.Addr, 100)
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, n := filesSize(t, s.DataDir, "*.rdb"); n != 0 {
			t.Errorf("profile none left %d .rdb files", n)
		}
		if _, n := filesSize(t, s.DataDir, "*.aof"); n != 0 {
			t.Errorf("profile none left %d .aof files", n)
		}
	})
	t.Run("rdb writes a dump on shutdown (the contrast)", func(t *testing.T) {
		t.Parallel()
		s := servertest.Start(t, server.Redis, server.Options{Profile: "rdb"})
		redisSet(t, s.Addr, 100)
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if size, n := filesSize(t, s.DataDir, "*.rdb"); n == 0 || size == 0 {
			t.Errorf("profile rdb wrote no dump on shutdown")
		}
	})
}

func TestPostgresAsyncCommitTakesEffect(t *testing.T) {
	ctx := context.Background()
	for profile, want := range map[string]string{"default": "on", "async-commit": "off"} {
		s := servertest.Start(t, server.Postgres, server.Options{Profile: profile})
		conn, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got)
		conn.Close(ctx)
		if err != nil || got != want {
			t.Errorf("profile %s: SHOW synchronous_commit = %q (%v), want %q", profile, got, err, want)
		}
	}
}
