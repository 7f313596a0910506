package server

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mariadbDriver runs mariadbd with --no-defaults, so no host my.cnf leaks
// into a measurement, and every setting as a flag.
type mariadbDriver struct{}

const mariadbDatabase = "storebench"

// mariadbCommon keeps InnoDB small so it starts in about a second, and
// allows as many connections as PostgreSQL gets.
var mariadbCommon = map[string]string{
	"innodb_buffer_pool_size": "128M",
	"innodb_log_file_size":    "48M",
	"max_connections":         "200",
}

func (mariadbDriver) profiles() []profile {
	return []profile{
		{"default", withCommon(mariadbCommon, map[string]string{"innodb_flush_log_at_trx_commit": "1"})},
		{"relaxed", withCommon(mariadbCommon, map[string]string{"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"})},
	}
}

func (mariadbDriver) defaultProfile() string { return "default" }
func (mariadbDriver) users() []string        { return []string{"mysql"} }
func (mariadbDriver) reserved() []string {
	return []string{"port", "bind_address", "socket", "datadir", "tmpdir", "skip_networking", "pid_file", "user", "basedir", "defaults_file", "no_defaults"}
}
func (mariadbDriver) stopSignal() syscall.Signal { return syscall.SIGTERM }
func (mariadbDriver) url(s *Server) string {
	return fmt.Sprintf("mysql://root@%s/%s", s.Addr, mariadbDatabase)
}

func mariadbData(s *Server) string { return filepath.Join(s.DataDir, "data") }

// mariadbTmp is the server's own tmpdir. MariaDB removes every "#sql*" file
// it finds in its tmpdir when it starts, so servers sharing /tmp delete each
// other's temporary tables: four of twelve concurrent mariadb-install-db
// runs failed that way ("Unknown table 'mysql.tmp_user_sys'"), and a
// running server could lose an implicit temporary table to a neighbour.
func mariadbTmp(s *Server) string { return filepath.Join(s.DataDir, "tmp") }

func (mariadbDriver) init(ctx context.Context, s *Server) error {
	if _, err := s.socketDir(); err != nil {
		return err
	}
	if err := os.Mkdir(mariadbTmp(s), 0o700); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(mariadbTmp(s), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	initSQL := filepath.Join(s.DataDir, "init.sql")
	if err := os.WriteFile(initSQL, []byte("CREATE DATABASE IF NOT EXISTS "+mariadbDatabase+";\n"), 0o644); err != nil {
		return err
	}
	// "normal" root authentication: root@127.0.0.1 without password, like
	// PostgreSQL's trust, as the server only listens on loopback. The
	// account switch is done by us (Credential), not --user, which would
	// clear the parent-death signal.
	args := []string{"--no-defaults", "--datadir=" + mariadbData(s), "--tmpdir=" + mariadbTmp(s),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
		"--extra-file=" + initSQL}
	for _, k := range []string{"innodb_buffer_pool_size", "innodb_log_file_size"} {
		if v, ok := s.want[k]; ok {
			args = append(args, "--"+k+"="+v)
		}
	}
	return s.run(ctx, "mariadb-install-db", s.bins.Init, args...)
}

func (mariadbDriver) command(s *Server) (string, []string) {
	args := []string{"--no-defaults", // must come first
		"--datadir=" + mariadbData(s),
		"--tmpdir=" + mariadbTmp(s),
		"--port=" + fmt.Sprint(s.port),
		"--bind-address=127.0.0.1",
		"--skip-networking=0",
		"--socket=" + filepath.Join(s.sockDir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(s.DataDir, "mysqld.pid"),
		"--skip-name-resolve",
	}
	for _, k := range sortedKeys(s.want) {
		args = append(args, "--"+k+"="+s.want[k])
	}
	return s.bins.Server, args
}

func mariadbOpen(s *Server, db string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", s.Addr, db
	cfg.Timeout = 5 * time.Second
	cfg.InterpolateParams = true    // SHOW cannot always be a prepared statement
	cfg.Logger = &mysql.NopLogger{} // probes fail by design while it starts
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

func (mariadbDriver) probe(ctx context.Context, s *Server) error {
	db, err := mariadbOpen(s, "")
	if err != nil {
		return err
	}
	defer db.Close()
	var dir string
	if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&dir); err != nil {
		return err
	}
	if filepath.Clean(dir) != filepath.Clean(mariadbData(s)) {
		return fmt.Errorf("%w: datadir %s", errNotOurs, dir)
	}
	return nil
}

func (mariadbDriver) setup(context.Context, *Server) error { return nil } // init.sql did it

var mariadbAlways = []string{
	"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "binlog_format",
	"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_doublewrite", "innodb_flush_method",
	"innodb_io_capacity", "innodb_use_native_aio", "max_connections", "tx_isolation",
	"transaction_isolation", "thread_handling", "query_cache_type", "character_set_server",
}

func (mariadbDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	db, err := mariadbOpen(s, mariadbDatabase)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", nil, err
	}
	names := append([]string{}, mariadbAlways...)
	for _, k := range sortedKeys(s.want) {
		names = append(names, strings.ReplaceAll(k, "-", "_"))
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	q := "SHOW GLOBAL VARIABLES WHERE Variable_name IN (?" + strings.Repeat(",?", len(names)-1) + ")"
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	settings := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", nil, err
		}
		settings[k] = v
	}
	return version, settings, rows.Err()
}

func (mariadbDriver) durability(st map[string]string) string {
	var d string
	switch st["innodb_flush_log_at_trx_commit"] {
	case "1":
		d = "redo log fsynced at every commit: a crash loses nothing committed"
	case "2":
		d = "redo log written at commit, fsynced about once a second: a mariadbd crash loses nothing, an OS crash up to ~1 s of commits"
	default:
		d = "redo log written and fsynced about once a second: a crash loses up to ~1 s of commits"
	}
	if st["log_bin"] == "ON" && st["sync_binlog"] != "1" {
		d += "; binlog not fsynced per commit"
	}
	return d
}

func (mariadbDriver) crashLoss(set map[string]string) (processCrash, powerLoss string) {
	switch setting(set, "innodb_flush_log_at_trx_commit") {
	case "1":
		return "nothing committed: the redo log is written and fsynced at every commit",
			"nothing committed, if the disk honours fsync"
	case "2":
		return "nothing committed: the redo log is written to the OS at every commit (the page cache survives a killed process)",
			"up to ~1 s of commits (the redo log is fsynced once a second)"
	case "0":
		return "up to ~1 s of commits: the redo log stays in InnoDB's buffer until the once-a-second write",
			"up to ~1 s of commits"
	}
	return "unknown (innodb_flush_log_at_trx_commit=" + set["innodb_flush_log_at_trx_commit"] + ")", "unknown"
}
