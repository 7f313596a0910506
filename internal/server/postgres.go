package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// postgresDriver runs PostgreSQL: initdb into DataDir/pgdata, then postgres
// with every setting as a -c flag, so the command line is the whole config.
type postgresDriver struct{}

// pgUser and pgDatabase are the superuser and database clients get.
const (
	pgUser     = "storebench"
	pgDatabase = "storebench"
)

// pgCommon applies to every profile: room for the benchmarks' connections
// and data, and the server-side view (pg_stat_statements, I/O timing).
var pgCommon = map[string]string{
	"shared_buffers":  "256MB",
	"max_connections": "200",
	"track_io_timing": "on",
}

func (postgresDriver) profiles() []profile {
	return []profile{
		{"default", withCommon(pgCommon, map[string]string{"synchronous_commit": "on"})},
		{"async-commit", withCommon(pgCommon, map[string]string{"synchronous_commit": "off"})},
	}
}

func withCommon(common, own map[string]string) map[string]string {
	m := make(map[string]string, len(common)+len(own))
	for k, v := range common {
		m[k] = v
	}
	for k, v := range own {
		m[k] = v
	}
	return m
}

func (postgresDriver) defaultProfile() string { return "default" }
func (postgresDriver) users() []string        { return []string{"postgres"} }
func (postgresDriver) reserved() []string {
	return []string{"listen_addresses", "port", "unix_socket_directories", "data_directory", "config_file", "hba_file", "ident_file"}
}
func (postgresDriver) stopSignal() syscall.Signal { return syscall.SIGINT } // fast shutdown: SIGTERM would wait for clients to leave

func (postgresDriver) url(s *Server) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgUser, s.Addr, pgDatabase)
}

func pgData(s *Server) string { return filepath.Join(s.DataDir, "pgdata") }

func (postgresDriver) init(ctx context.Context, s *Server) error {
	if _, err := s.socketDir(); err != nil {
		return err
	}
	// --no-sync only speeds up initdb itself; the server fsyncs as configured.
	// --locale=C keeps text comparison independent of the host's locale.
	if err := s.run(ctx, "initdb", s.bins.Init, "-D", pgData(s), "-U", pgUser, "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		return err
	}
	preloadStatements(s)
	return nil
}

// preloadStatements loads pg_stat_statements when it is installed and no
// setting says otherwise: the server-side time of statements.
func preloadStatements(s *Server) {
	if _, set := s.want["shared_preload_libraries"]; !set {
		if lib, ok := pgStatStatements(s.bins); ok {
			s.want["shared_preload_libraries"] = "pg_stat_statements"
			if _, set := s.want["pg_stat_statements.track"]; !set {
				s.want["pg_stat_statements.track"] = "all"
			}
		} else {
			s.Notes = append(s.Notes, "pg_stat_statements not installed ("+lib+" missing): server-side statement stats unavailable")
		}
	}
}

// pgStatStatements reports whether the extension's library is installed
// (Debian ships it with the server; some builds need a -contrib package).
func pgStatStatements(b Binaries) (string, bool) {
	dir := filepath.Join(filepath.Dir(b.Server), "..", "lib")
	if b.PGConfig != "" {
		if out, err := exec.Command(b.PGConfig, "--pkglibdir").Output(); err == nil {
			dir = strings.TrimSpace(string(out))
		}
	}
	for _, ext := range []string{".so", ".dylib"} {
		if p := filepath.Join(dir, "pg_stat_statements"+ext); fileSize(p) > 0 {
			return p, true
		}
	}
	return filepath.Join(dir, "pg_stat_statements.so"), false
}

func (postgresDriver) command(s *Server) (string, []string) {
	args := []string{"-D", pgData(s),
		"-c", "listen_addresses=127.0.0.1",
		"-c", fmt.Sprintf("port=%d", s.port),
		"-c", "unix_socket_directories=" + s.sockDir,
	}
	for _, k := range sortedKeys(s.want) {
		args = append(args, "-c", k+"="+s.want[k])
	}
	return s.bins.Server, args
}

func pgConnect(ctx context.Context, s *Server, db string) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&connect_timeout=5", pgUser, s.Addr, db))
}

func (postgresDriver) probe(ctx context.Context, s *Server) error {
	conn, err := pgConnect(ctx, s, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var dir string
	if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dir); err != nil {
		return err
	}
	if filepath.Clean(dir) != filepath.Clean(pgData(s)) {
		return fmt.Errorf("%w: data_directory %s", errNotOurs, dir)
	}
	return nil
}

func (postgresDriver) setup(ctx context.Context, s *Server) error {
	conn, err := pgConnect(ctx, s, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgDatabase); err != nil {
		return err
	}
	if s.want["shared_preload_libraries"] != "pg_stat_statements" {
		return nil
	}
	// The view is per database: create it where the benchmarks run.
	db, err := pgConnect(ctx, s, pgDatabase)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	_, err = db.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	return err
}

// pgAlways are read back even when at their defaults: what decides
// durability and speed.
var pgAlways = []string{
	"fsync", "synchronous_commit", "full_page_writes", "wal_level", "wal_sync_method",
	"wal_writer_delay", "commit_delay", "wal_buffers", "shared_buffers", "work_mem",
	"max_wal_size", "checkpoint_timeout", "max_connections", "huge_pages", "jit",
	"data_checksums", "shared_preload_libraries", "track_io_timing", "server_encoding", "lc_collate",
	// PostgreSQL 18's asynchronous I/O; absent before 18, so not read back there.
	"io_method", "io_workers",
}

func (postgresDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	return pgInspect(ctx, s, nil)
}

// pgInspect reads back a PostgreSQL server's version and settings, then
// runs also (when not nil) on the same connection: what a kind built on
// PostgreSQL (a replica) checks and records besides.
func pgInspect(ctx context.Context, s *Server, also func(conn *pgx.Conn, settings map[string]string) error) (string, map[string]string, error) {
	conn, err := pgConnect(ctx, s, pgDatabase)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "", nil, err
	}
	// current_setting gives values with units ("256MB"), as they are set.
	rows, err := conn.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE source NOT IN ('default', 'client', 'session') OR name = ANY($1)`, pgAlways)
	if err != nil {
		return "", nil, err
	}
	settings := map[string]string{}
	var name, value string
	if _, err := pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		settings[name] = value
		return nil
	}); err != nil {
		return "", nil, err
	}
	if also != nil {
		if err := also(conn, settings); err != nil {
			return "", nil, err
		}
	}
	return version, settings, nil
}

func (postgresDriver) durability(st map[string]string) string {
	var d string
	switch {
	case st["fsync"] == "off":
		d = "fsync off: an OS crash or power loss can corrupt the database"
	case st["synchronous_commit"] == "off":
		d = fmt.Sprintf("WAL flushed in the background: a crash loses up to 3 x wal_writer_delay (%s) of commits, never corrupts", st["wal_writer_delay"])
	default:
		d = "WAL fsynced at every commit: a crash loses nothing committed"
	}
	if st["full_page_writes"] == "off" {
		d += "; full_page_writes off: torn pages possible after an OS crash"
	}
	return d
}

// crashLoss also reads the store's own design (the postgres store's
// option, in the merged settings): an UNLOGGED table is its loss.
func (postgresDriver) crashLoss(set map[string]string) (processCrash, powerLoss string) {
	switch {
	case setting(set, "design") == "unlogged" || setting(set, "table_persistence") == "unlogged":
		return "the whole table: crash recovery truncates UNLOGGED tables",
			"the whole table (truncated by crash recovery)"
	case setting(set, "fsync") == "off":
		return "nothing acknowledged: the WAL reaches the page cache at commit (fsync off only matters to the OS)",
			"anything, and the database may be corrupt (fsync off)"
	case setting(set, "synchronous_commit") == "off":
		return "the commits still in the WAL buffers (shared memory, gone with the processes): up to 3 × wal_writer_delay",
			"up to 3 × wal_writer_delay of commits (" + set["wal_writer_delay"] + " each); never corrupt"
	}
	return "nothing committed: the WAL is fsynced at every commit",
		"nothing committed (WAL fsynced at every commit), if the disk honours fsync"
}

// pgSince are settings PostgreSQL has only from a major version on (18:
// asynchronous I/O). An older server refuses to start with them; naming
// the version it is says more, and before any work.
var pgSince = map[string]int{"io_method": 18, "io_workers": 18, "io_max_combine_limit": 18}

// PGIOMethods are the values of io_method (PostgreSQL 18); io_uring also
// needs a build with liburing and a kernel that allows io_uring.
var PGIOMethods = []string{"worker", "sync", "io_uring"}

func (postgresDriver) checkSettings(want map[string]string, in Installation) error {
	for _, name := range sortedKeys(want) {
		since, ok := pgSince[name]
		if !ok {
			continue
		}
		v := in.Version
		if v == "" {
			var err error
			if v, err = BinaryVersion(Postgres, in.Binaries.Server); err != nil {
				return err
			}
		}
		if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major < since {
			return fmt.Errorf("setting %s needs PostgreSQL %d or later; %s is PostgreSQL %s (pick one with version: \"%d\", e.g. postgres@%d)",
				name, since, in.Binaries.Server, v, since, since)
		}
	}
	if want["io_method"] == "io_uring" {
		return ioUringUsable(in.Binaries)
	}
	return nil
}

// ioUringUsable says why io_method=io_uring cannot work here, if it
// cannot: a build without liburing rejects the value, and a kernel with
// io_uring disabled makes the server fail at its first I/O.
func ioUringUsable(b Binaries) error {
	if b.PGConfig == "" {
		return fmt.Errorf("io_method=io_uring: no pg_config beside %s to tell whether it was built with liburing", b.Server)
	}
	out, err := exec.Command(b.PGConfig, "--configure").Output()
	if err != nil {
		return fmt.Errorf("io_method=io_uring: %s --configure: %v", b.PGConfig, err)
	}
	if !strings.Contains(string(out), "--with-liburing") {
		return fmt.Errorf("io_method=io_uring: %s was built without liburing (use worker or sync)", b.Server)
	}
	if disabled, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); err == nil && strings.TrimSpace(string(disabled)) != "0" {
		return fmt.Errorf("io_method=io_uring: this kernel disables io_uring (kernel.io_uring_disabled=%s)", strings.TrimSpace(string(disabled)))
	}
	return nil
}
