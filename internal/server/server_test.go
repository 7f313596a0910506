package server_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// want lists settings each profile must show once read back from the server.
var want = map[string]map[string]string{
	"postgres/default":      {"synchronous_commit": "on", "shared_buffers": "256MB", "max_connections": "200", "shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all", "track_io_timing": "on"},
	"postgres/async-commit": {"synchronous_commit": "off", "fsync": "on"},
	"redis/none":            {"save": "", "appendonly": "no"},
	"redis/rdb":             {"save": "3600 1 300 100 60 10000", "appendonly": "no"},
	"redis/aof-everysec":    {"save": "", "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "no"},
	"redis/aof-always":      {"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no"},
	"redis/aof-rdb":         {"save": "3600 1 300 100 60 10000", "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "yes"},
	"valkey/none":           {"save": "", "appendonly": "no", "mem_allocator": "libc"},
	"valkey/rdb":            {"save": "3600 1 300 100 60 10000", "appendonly": "no"},
	"valkey/aof-everysec":   {"save": "", "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "no"},
	"valkey/aof-always":     {"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no"},
	"valkey/aof-rdb":        {"save": "3600 1 300 100 60 10000", "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "yes"},
	"memcached/default":     {"maxbytes": "1073741824", "num_threads": "4", "maxconns": "4096", "udpport": "0"},
	"mariadb/default":       {"innodb_flush_log_at_trx_commit": "1", "innodb_buffer_pool_size": "134217728", "max_connections": "200"},
	"mariadb/relaxed":       {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"},
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	for _, k := range server.Kinds() {
		for _, prof := range server.Profiles(k) {
			name := string(k) + "/" + prof
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				begin := time.Now()
				s := servertest.Start(t, k, server.Options{Profile: prof})
				t.Logf("started in %v: %s %s at %s; durability: %s", time.Since(begin).Round(time.Millisecond), k, s.Version, s.URL, s.Durability)
				checkServer(t, s, want[name])
				checkStop(t, s)
			})
		}
	}
}

func checkServer(t *testing.T, s *server.Server, want map[string]string) {
	t.Helper()
	if want == nil {
		t.Fatalf("no expectations for %s/%s", s.Kind, s.Profile)
	}
	if s.Version == "" {
		t.Error("empty Version")
	}
	if s.Durability == "" {
		t.Error("empty Durability")
	}
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("Addr %q is not loopback", s.Addr)
	}
	for k, v := range want {
		if got, ok := s.Settings[k]; !ok || got != v {
			t.Errorf("setting %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	st := busyStats(t, s)
	if st.RSSBytes == 0 || st.Processes == 0 {
		t.Errorf("Stats = %+v, want RSS > 0", st)
	}
	if s.Kind == server.Postgres && st.Processes < 2 {
		t.Errorf("postgres Stats counted %d processes, want the postmaster and its children", st.Processes)
	}
}

// busyStats polls Stats until some CPU time shows, loading the server a
// little: an idle memcached may not have used one clock tick yet.
func busyStats(t *testing.T, s *server.Server) server.ProcStats {
	t.Helper()
	var st server.ProcStats
	var err error
	// No step between polls: the load (or, where there is none, 50 ms
	// of the server's own work) is the wait.
	if !testkit.WaitFor(10*time.Second, 0, func() bool {
		if st, err = s.Stats(); err != nil || st.CPUSeconds > 0 {
			return true
		}
		switch s.Kind {
		case server.Redis, server.Valkey:
			textLoad(t, s.Addr, "PING\r\n", 2000)
		case server.Memcached:
			textLoad(t, s.Addr, "version\r\n", 2000)
		default:
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}) {
		t.Fatalf("Stats CPU still 0 after load: %+v", st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// textLoad sends a one-line command n times, reading each reply line.
func textLoad(t *testing.T, addr, cmd string, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for range n {
		if _, err := c.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
}

func checkStop(t *testing.T, s *server.Server) {
	t.Helper()
	pids := s.PIDs()
	if len(pids) == 0 || pids[0] != s.PID {
		t.Fatalf("PIDs() = %v, want the server %d first", pids, s.PID)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir %s still there after Stop (%v)", s.DataDir, err)
	}
	for _, pid := range pids {
		if testkit.Alive(pid) {
			t.Errorf("process %d still alive after Stop", pid)
		}
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartFailureQuotesLog(t *testing.T) {
	t.Parallel()
	base := servertest.BaseDir(t)
	_, err := server.Start(context.Background(), server.Postgres, server.Options{
		BaseDir: base, Settings: map[string]string{"shared_buffers": "banana"},
	})
	if err == nil {
		t.Fatal("Start succeeded with shared_buffers=banana")
	}
	for _, s := range []string{"start postgres", `invalid value for parameter "shared_buffers": "banana"`, "command: ", "shared_buffers=banana"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Errorf("failed start left %v in %s", left, base)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		kind server.Kind
		opts server.Options
		msg  string
	}{
		"unknown kind":    {"oracle", server.Options{}, "unknown server kind"},
		"unknown profile": {server.Redis, server.Options{Profile: "fast"}, "aof-always"},
		"reserved":        {server.Redis, server.Options{Settings: map[string]string{"bind": "0.0.0.0"}}, "managed by storebench"},
		"newline":         {server.Redis, server.Options{Settings: map[string]string{"save": "\nbind 0.0.0.0"}}, "one line"},
		"cpus":            {server.Memcached, server.Options{CPUs: "1-0"}, "bad CPU list"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := server.Start(context.Background(), tc.kind, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Start error = %v, want one containing %q", err, tc.msg)
			}
		})
	}
}

func TestLocateBogusOverride(t *testing.T) {
	for _, tc := range []struct {
		kind server.Kind
		env  string
	}{
		{server.Postgres, server.EnvPostgresBin},
		{server.Redis, server.EnvRedisServer},
		{server.Valkey, server.EnvValkeyServer},
		{server.Memcached, server.EnvMemcached},
		{server.MariaDB, server.EnvMariaDBBin},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Setenv(tc.env, "/nonexistent/storebench")
			_, err := server.Locate(tc.kind)
			var missing *server.MissingError
			if !errors.As(err, &missing) {
				t.Fatalf("Locate = %v, want a *MissingError", err)
			}
			for _, s := range []string{server.InstallHint(tc.kind), "/nonexistent/storebench", tc.env} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestLocateFindsInstalled(t *testing.T) {
	t.Parallel()
	for _, k := range server.Kinds() {
		b, err := server.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		if b.Server == "" || ((k == server.Postgres || k == server.MariaDB) && b.Init == "") {
			t.Errorf("Locate(%s) = %+v", k, b)
		}
	}
}

// TestStopAll is not parallel: StopAll stops every server of the process.
func TestStopAll(t *testing.T) {
	base := servertest.BaseDir(t)
	var servers []*server.Server
	for range 2 {
		s, err := server.Start(context.Background(), server.Memcached, server.Options{BaseDir: base})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	if err := servers[1].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := server.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Running() || testkit.Alive(s.PID) {
			t.Errorf("%s pid %d still running after StopAll", s.Kind, s.PID)
		}
		if _, err := os.Stat(s.DataDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("data dir %s still there after StopAll", s.DataDir)
		}
	}
}

func TestCPUPinning(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Memcached, server.Options{CPUs: "0"})
	if s.CPUs != "0" {
		t.Errorf("CPUs = %q", s.CPUs)
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", s.PID))
	if err != nil || len(tasks) < 4 {
		t.Fatalf("tasks of memcached: %v %v", tasks, err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		if !strings.Contains(string(b), "Cpus_allowed_list:\t0\n") {
			t.Errorf("%s not pinned to CPU 0", task)
		}
	}
	// We must not have stayed pinned ourselves.
	b, _ := os.ReadFile("/proc/self/status")
	if strings.Contains(string(b), "Cpus_allowed_list:\t0\n") {
		t.Log("note: this test process itself is limited to CPU 0")
	}
}

// TestRedisKillRestart checks that Kill is a crash and that an AOF fsynced
// on every write keeps the acknowledged write across it.
func TestRedisKillRestart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Redis, server.Options{Profile: "aof-always"})
	if got := redisCmd(t, s.Addr, "SET storebench:k v1"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	old := s.PID
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if testkit.Alive(old) || s.Running() {
		t.Fatal("redis alive after Kill")
	}
	if _, err := os.Stat(s.DataDir); err != nil {
		t.Fatalf("Kill removed the data dir: %v", err)
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.PID == old || !s.Running() {
		t.Fatalf("Restart: pid %d (was %d), running %v", s.PID, old, s.Running())
	}
	if got := redisCmd(t, s.Addr, "GET storebench:k"); got != "$2" {
		t.Errorf("GET after crash: %q, want the value back", got)
	}
	if err := s.Restart(context.Background()); err == nil {
		t.Error("Restart of a running server succeeded")
	}
}

// redisCmd sends one inline command and returns the first reply line.
func redisCmd(t *testing.T, addr, cmd string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// TestPostgresKillRestart checks that Kill takes every backend down with the
// postmaster and that the cluster recovers on Restart.
func TestPostgresKillRestart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Postgres, server.Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	pids := s.PIDs()
	if len(pids) < 3 {
		t.Fatalf("PIDs = %v, want the postmaster, its workers and our backend", pids)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	for _, pid := range pids {
		if testkit.Alive(pid) {
			t.Errorf("pid %d alive after Kill", pid)
		}
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Errorf("after crash recovery: v=%d err=%v", v, err)
	}
	if !strings.Contains(s.LogTail(50), "not properly shut down") {
		t.Logf("log tail:\n%s", s.LogTail(20))
		t.Error("log does not show crash recovery")
	}
}

// TestMariaDBKillRestart checks InnoDB crash recovery on Restart keeps a
// committed row (innodb_flush_log_at_trx_commit=1).
func TestMariaDBKillRestart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.MariaDB, server.Options{})
	ctx := context.Background()
	dsn := "root@tcp(" + s.Addr + ")/storebench"
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE t (v INT) ENGINE=InnoDB", "INSERT INTO t VALUES (42)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	db, err = sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Errorf("after crash recovery: v=%d err=%v", v, err)
	}
}

// TestStatsCPUPrecision checks that server CPU time is measured to well under
// a clock tick: a few thousand requests to Redis cost a few ms of CPU, which
// /proc/PID/stat would show as 0 or a multiple of 10 ms.
func TestStatsCPUPrecision(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Redis, server.Options{Profile: "aof-always"})
	before, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	textLoad(t, s.Addr, "PING\r\n", 3000)
	textLoad(t, s.Addr, "SET storebench:k 0123456789\r\n", 1000)
	after, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if after.CPUCoarse {
		t.Fatalf("CPU time came from clock ticks: %+v", after)
	}
	delta := after.CPUSeconds - before.CPUSeconds
	ns := int64(math.Round(delta * 1e9))
	t.Logf("4000 requests: %v of server CPU (%.2f µs/request); device %q wrote %d bytes meanwhile",
		time.Duration(ns), delta*1e6/4000, after.Device, after.DeviceWriteBytes-before.DeviceWriteBytes)
	if ns <= 0 || ns%int64(10*time.Millisecond) == 0 {
		t.Errorf("CPU delta %v: want > 0 and not a multiple of 10 ms", time.Duration(ns))
	}
	// The precise total and the tick-based split describe the same time:
	// at most a tick apart per field.
	if ticks := after.UserSeconds + after.SystemSeconds; math.Abs(after.CPUSeconds-ticks) > 0.02*float64(after.Processes)+0.01 {
		t.Errorf("CPUSeconds %.6f, user+system %.2f: too far apart", after.CPUSeconds, ticks)
	}
	if after.Device != "" && after.DeviceWriteBytes <= before.DeviceWriteBytes {
		t.Errorf("device %s wrote nothing during 1000 fsynced SETs", after.Device)
	}
}

// TestCheck checks the preflight refuses what Start would, and creates
// nothing while doing so.
func TestCheck(t *testing.T) {
	base := servertest.BaseDir(t)
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(base, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	closedMsg := "not searchable by user"
	if os.Geteuid() != 0 {
		// As ourselves, a dir we cannot write to is the failure to catch.
		if err := os.Chmod(closed, 0o500); err != nil {
			t.Fatal(err)
		}
		closedMsg = "cannot create the data dir"
	}
	for _, k := range server.Kinds() {
		if err := server.Check(k, server.Options{BaseDir: base}); err != nil {
			t.Errorf("Check(%s) = %v, want nil", k, err)
		}
	}
	if err := server.Check(server.Postgres, server.Options{Profile: "async-commit", Settings: map[string]string{"work_mem": "64MB"}, CPUs: "0", BaseDir: base}); err != nil {
		t.Errorf("Check with profile, settings and CPUs = %v", err)
	}
	for name, tc := range map[string]struct {
		kind server.Kind
		opts server.Options
		msg  []string
	}{
		"unknown kind":    {"oracle", server.Options{}, []string{"unknown server kind"}},
		"unknown profile": {server.Redis, server.Options{Profile: "fast"}, []string{"redis: ", "aof-always"}},
		"reserved":        {server.Postgres, server.Options{Settings: map[string]string{"port": "5432"}}, []string{"postgres: ", "managed by storebench"}},
		"bad cpu list":    {server.Memcached, server.Options{CPUs: "1-0"}, []string{"bad CPU list"}},
		"absent cpu":      {server.Memcached, server.Options{CPUs: "1000"}, []string{"CPUs 1000 are not available", "storebench may use CPUs "}},
		"no base dir":     {server.Redis, server.Options{BaseDir: filepath.Join(base, "nope")}, []string{"base dir", "no such file"}},
		"base is a file":  {server.Redis, server.Options{BaseDir: file}, []string{"not a directory"}},
		"closed base dir": {server.Postgres, server.Options{BaseDir: closed}, []string{closedMsg, closed}},
	} {
		t.Run(name, func(t *testing.T) {
			err := server.Check(tc.kind, tc.opts)
			if err == nil {
				t.Fatal("Check succeeded")
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Check error %q lacks %q", err, m)
				}
			}
			// Start refuses the same, before creating anything.
			opts := tc.opts
			if opts.BaseDir == "" {
				opts.BaseDir = base
			}
			if _, err := server.Start(context.Background(), tc.kind, opts); err == nil {
				t.Error("Start succeeded where Check failed")
			}
		})
	}
	t.Run("missing binary", func(t *testing.T) {
		t.Setenv(server.EnvRedisServer, "/nonexistent/redis-server")
		err := server.Check(server.Redis, server.Options{BaseDir: base})
		var missing *server.MissingError
		if !errors.As(err, &missing) || !strings.Contains(err.Error(), server.InstallHint(server.Redis)) {
			t.Errorf("Check = %v, want a *MissingError with the install hint", err)
		}
		if strings.HasPrefix(err.Error(), "redis: redis:") {
			t.Errorf("kind named twice: %v", err)
		}
	})
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("base dir holds %d entries after the checks, want only the 2 fixtures", len(entries))
	}
	if entries, _ := os.ReadDir(closed); len(entries) != 0 {
		t.Errorf("Check or Start created %v in %s", entries, closed)
	}
}

// TestMariaDBConcurrentStarts starts several managed MariaDB servers at
// once, as the test suite and two storebench runs do. Each must have a
// tmpdir of its own: MariaDB deletes every "#sql*" file in its tmpdir when
// it starts, and with /tmp shared, 4 of 12 concurrent mariadb-install-db
// runs failed on a neighbour's deleted temporary tables.
func TestMariaDBConcurrentStarts(t *testing.T) {
	t.Parallel()
	const n = 6
	servers, errs := make([]*server.Server, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range servers {
		base := servertest.BaseDir(t) // t's helpers only on the test's goroutine
		wg.Go(func() {
			servers[i], errs[i] = server.Start(context.Background(), server.MariaDB, server.Options{BaseDir: base})
		})
	}
	wg.Wait()
	for i, s := range servers {
		if errs[i] != nil {
			t.Errorf("server %d of %d started at once: %v", i+1, n, errs[i])
			continue
		}
		t.Cleanup(func() {
			if err := s.Stop(context.Background()); err != nil {
				t.Error(err)
			}
		})
		db, err := sql.Open("mysql", "root@tcp("+s.Addr+")/storebench")
		if err != nil {
			t.Fatal(err)
		}
		var dir string
		err = db.QueryRowContext(context.Background(), "SELECT @@tmpdir").Scan(&dir)
		db.Close()
		if err != nil || !strings.HasPrefix(filepath.Clean(dir), filepath.Clean(s.DataDir)+string(filepath.Separator)) {
			t.Errorf("tmpdir %q (%v), want one inside the server's own dir %s", dir, err, s.DataDir)
		}
	}
}
