package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// One MariaDB server for the whole package (tests and benchmarks), started
// on first use and stopped by TestMain: starting one costs a few seconds.
var shared struct {
	once sync.Once
	dir  string
	srv  *server.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := shared.srv.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "stop mariadb:", err)
			code = max(code, 1)
		}
		cancel()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// serverURL returns the URL of the shared server. A missing binary fails the
// test with the install hint, as servertest.Start does.
func serverURL(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "storebench-mysql-test-"); shared.err != nil {
			return
		}
		// As root the server runs as an unprivileged account: let it in.
		if shared.err = os.Chmod(shared.dir, 0o711); shared.err != nil {
			return
		}
		shared.srv, shared.err = server.Start(context.Background(), server.MariaDB, server.Options{
			BaseDir: shared.dir,
			// So that the lock wait test takes one second, not fifty.
			Settings: map[string]string{"innodb_lock_wait_timeout": "1"},
		})
	})
	if shared.err != nil {
		t.Fatalf("start mariadb: %v", shared.err)
	}
	return shared.srv.URL
}

func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := New(context.Background(), Config{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// foreign returns a connection pool of its own, as another user would have.
func foreign(t *testing.T, url string) *sql.DB {
	t.Helper()
	cfg, _, err := parseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// lockRow locks the kv row of key from a connection of its own, in a
// transaction rolled back when the test ends, so the store's writes to it
// wait for the lock.
func lockRow(t *testing.T, url string, s *Store, key string) {
	t.Helper()
	conn, err := foreign(t, url).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	exec(t, conn, `BEGIN`)
	exec(t, conn, `SELECT v FROM `+s.cfg.Namespace+`.kv WHERE k = '`+key+`' FOR UPDATE`)
	t.Cleanup(func() { exec(t, conn, `ROLLBACK`) })
}

// sessionStatus reads a status variable of c's own session.
func sessionStatus(t *testing.T, c *Client, name string) string {
	t.Helper()
	rows, err := c.conn.(queryer).QueryContext(context.Background(), "SHOW SESSION STATUS LIKE '"+name+"'", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	row := make([]driver.Value, 2)
	if err := rows.Next(row); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v, _ := row[1].([]byte)
	return string(v)
}

func count(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func databaseExists(t *testing.T, db *sql.DB, name string) bool {
	return count(t, db, `SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '`+name+`'`) == 1
}

// TestMySQL shares one server among its subtests.
func TestMySQL(t *testing.T) {
	url := serverURL(t)
	opts := storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			db := foreign(t, url)
			// A database named like a namespace but without the marker, and
			// a table in the database of the URL.
			ns := storetest.Namespace(t)
			exec(t, db, `CREATE DATABASE `+ns)
			exec(t, db, `CREATE TABLE `+ns+`.kv (k VARBINARY(255) PRIMARY KEY, v LONGBLOB)`)
			exec(t, db, `INSERT INTO `+ns+`.kv VALUES ('k', 'v')`)
			exec(t, db, `CREATE TABLE storebench.`+ns+` (x INT)`)
			exec(t, db, `INSERT INTO storebench.`+ns+` VALUES (42)`)
			return func(t *testing.T) {
				db := foreign(t, url)
				if n := count(t, db, `SELECT COUNT(*) FROM `+ns+`.kv WHERE k = 'k' AND v = 'v'`); n != 1 {
					t.Errorf("foreign database %s: %d rows", ns, n)
				}
				if n := count(t, db, `SELECT x FROM storebench.`+ns); n != 42 {
					t.Errorf("foreign table storebench.%s: %d", ns, n)
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			return databaseExists(t, foreign(t, url), info.Namespace)
		},
	}
	storetest.RunKVPaths(t, func(t *testing.T) store.Store { return open(t, url) }, opts)
	t.Run("Records", func(t *testing.T) {
		t.Parallel()
		storetest.RunRecords(t, func(t *testing.T) store.Store { return open(t, url) }, nil)
	})

	t.Run("OpenFailsOnAFailedPrepare", func(t *testing.T) {
		t.Parallel()
		s := open(t, url)
		exec(t, foreign(t, url), "DROP TABLE "+s.cfg.Namespace+".kv")
		if c, err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "prepare get") {
			t.Errorf("Open with the table gone: %v, %v; want a prepare error", c, err)
		}
	})

	t.Run("PerRequestPreparesNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t, url)
		ctx := context.Background()
		pooled, err := s.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pooled.Close()
		perRequest, err := s.OpenPerRequest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer perRequest.Close()
		for c, want := range map[store.Client]string{pooled: "3", perRequest: "0"} {
			if err := c.(store.KV).Set(ctx, []byte("k"), []byte("v"), time.Minute); err != nil {
				t.Fatal(err)
			}
			if got := sessionStatus(t, c.(*Client), "Com_stmt_prepare"); got != want {
				t.Errorf("%s statements prepared on a client of %s, want %s", got, map[bool]string{true: "Open", false: "OpenPerRequest"}[c == pooled], want)
			}
		}
	})

	t.Run("Info", func(t *testing.T) {
		t.Parallel()
		info, err := open(t, url).Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Kind != "mysql" || !strings.Contains(info.Version, "MariaDB") {
			t.Errorf("kind %q, version %q", info.Kind, info.Version)
		}
		// The default profile asks for 1; Info reads back what the server does.
		if got := info.Settings["innodb_flush_log_at_trx_commit"]; got != "1" {
			t.Errorf("innodb_flush_log_at_trx_commit = %q", got)
		}
		for _, k := range []string{"sync_binlog", "log_bin", "innodb_buffer_pool_size", "innodb_doublewrite", "transaction_isolation", "version_comment"} {
			if info.Settings[k] == "" {
				t.Errorf("setting %s missing", k)
			}
		}
		if info.Settings["table_engine"] != "InnoDB" {
			t.Errorf("table engine %q", info.Settings["table_engine"])
		}
		if info.Durability != "redo log fsync every commit; binlog off" {
			t.Errorf("durability %q", info.Durability)
		}
		if info.Location != shared.srv.URL {
			t.Errorf("location %q, want %q", info.Location, shared.srv.URL)
		}
	})

	t.Run("RefusesUnmarkedDatabase", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		db := foreign(t, url)
		taken := storetest.Namespace(t)
		exec(t, db, `CREATE DATABASE `+taken)
		exec(t, db, `CREATE TABLE `+taken+`.kv (x INT)`)
		exec(t, db, `INSERT INTO `+taken+`.kv VALUES (7)`)
		_, err := New(ctx, Config{URL: url, Namespace: taken})
		storetest.ErrIs(t, err, store.ErrNotOwned)
		// An owner table of another shape, or naming someone else, does not make it ours.
		exec(t, db, `CREATE TABLE `+taken+`.`+OwnerTable+` (x INT)`)
		_, err = New(ctx, Config{URL: url, Namespace: taken})
		storetest.ErrIs(t, err, store.ErrNotOwned)
		exec(t, db, `DROP TABLE `+taken+`.`+OwnerTable)
		exec(t, db, `CREATE TABLE `+taken+`.`+OwnerTable+` (owner VARCHAR(32))`)
		exec(t, db, `INSERT INTO `+taken+`.`+OwnerTable+` VALUES ('someone else')`)
		_, err = New(ctx, Config{URL: url, Namespace: taken})
		storetest.ErrIs(t, err, store.ErrNotOwned)

		// A store whose marker is removed refuses to truncate or drop.
		s := open(t, url)
		ns := s.cfg.Namespace
		storetest.KVClient(t, s).Set(ctx, []byte("k"), []byte("v"), 0)
		exec(t, db, `DELETE FROM `+ns+`.`+OwnerTable)
		storetest.ErrIs(t, s.Reset(ctx), store.ErrNotOwned)
		storetest.ErrIs(t, s.Close(ctx), store.ErrNotOwned)
		if n := count(t, db, `SELECT x FROM `+taken+`.kv`); n != 7 {
			t.Errorf("%s.kv: %d, want 7", taken, n)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM `+ns+`.kv`); n != 1 {
			t.Errorf("%s.kv: %d rows, want 1", ns, n)
		}
		exec(t, db, `DROP DATABASE `+taken)
		exec(t, db, `DROP DATABASE `+ns)
	})

	t.Run("ReusesMarkedLeftover", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		ns := storetest.Namespace(t)
		a, err := New(ctx, Config{URL: url, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if err := storetest.KVClient(t, a).Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		b, err := New(ctx, Config{URL: url, Namespace: ns}) // a "crashed" and left its database
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(ctx)
		if _, ok, err := storetest.KVClient(t, b).Get(ctx, []byte("k"), nil); ok || err != nil {
			t.Errorf("leftover row visible: %v, %v", ok, err)
		}
	})

	t.Run("PasswordRedacted", func(t *testing.T) {
		t.Parallel()
		bad := strings.Replace(url, "root@", "root:s3cret%2Fpw%40x@", 1) // "s3cret/pw@x"
		_, err := New(context.Background(), Config{URL: bad, Namespace: "sbt_pw"})
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "Access denied") {
			t.Errorf("wrong password: error = %v", err)
		}
		t.Log(err)
		// Malformed URLs: url.Parse and the driver's own parser quote their input.
		for _, u := range []string{
			"mysql://root:s3cretpw@127.0.0.1:port/db",
			"mysql://root:s3cretpw@127.0.0.1:3306/db?timeout=xyz",
			"mysql://root:s3cretpw@127.0.0.1:3306/db?tls=nosuchconfig",
			"mysql://root:s3cretpw@[::1/db",
		} {
			err := (Config{URL: u, Namespace: "sbt_pw"}).Validate()
			if err == nil || strings.Contains(err.Error(), "s3cretpw") {
				t.Errorf("%s: error = %v", store.RedactURL(u), err)
			}
			t.Log(err)
		}
	})

	t.Run("LockWaitTimeout", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		s := open(t, url)
		kv := storetest.KVClient(t, s)
		if err := kv.Set(ctx, []byte("locked"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		lockRow(t, url, s, "locked")
		err := kv.Set(ctx, []byte("locked"), []byte("w"), 0) // innodb_lock_wait_timeout=1
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != erLockWaitTimeout || errclass.Classify(err) != errclass.ClassTimeout {
			t.Errorf("error = %v, class %s; want MySQL error 1205, timeout", err, errclass.Classify(err))
		}
		// The connection is still usable after a statement error.
		if _, ok, err := kv.Get(ctx, []byte("locked"), nil); !ok || err != nil {
			t.Errorf("Get after lock wait timeout: %v, %v", ok, err)
		}
	})

	// Both ways of waiting for the server (blockio): interrupting a blocked
	// read is done differently.
	for _, blocking := range []bool{false, true} {
		kvClient := func(t *testing.T, s *Store) store.KV {
			if blocking {
				return storetest.KVClient(t, storetest.BlockingStore(t, s))
			}
			return storetest.KVClient(t, s)
		}
		suffix := map[bool]string{true: "/blocking-io"}[blocking]
		t.Run("ContextEnds"+suffix, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := open(t, url)
			kv := kvClient(t, s)
			if err := kv.Set(ctx, []byte("locked"), []byte("v"), 0); err != nil {
				t.Fatal(err)
			}
			// A context that is over before the call: no I/O, the client stays usable.
			done, cancel := context.WithCancel(ctx)
			cancel()
			if _, _, err := kv.Get(done, []byte("locked"), nil); !errors.Is(err, context.Canceled) {
				t.Errorf("Get(cancelled ctx) = %v", err)
			}
			if _, ok, err := kv.Get(ctx, []byte("locked"), nil); !ok || err != nil {
				t.Fatalf("Get after a cancelled ctx: %v, %v", ok, err)
			}
			// A deadline reached while the server waits for a lock interrupts
			// the call, long before innodb_lock_wait_timeout (1 s).
			lockRow(t, url, s, "locked")
			dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := kv.Set(dctx, []byte("locked"), []byte("w"), 0)
			if d := time.Since(start); d > 800*time.Millisecond {
				t.Errorf("Set returned after %v, want about 200 ms", d)
			}
			if !errors.Is(err, context.DeadlineExceeded) || errclass.Classify(err) != errclass.ClassTimeout {
				t.Errorf("Set past deadline = %v, class %s; want deadline exceeded, timeout", err, errclass.Classify(err))
			}
			t.Log(err)
			// The protocol state is unknown after an interrupted read: the
			// driver has closed the connection, and says so.
			if _, _, err := kv.Get(ctx, []byte("locked"), nil); errclass.Classify(err) != errclass.ClassUnavailable {
				t.Errorf("Get after an interrupted call = %v, class %s; want unavailable", err, errclass.Classify(err))
			}
		})

		t.Run("KilledConnection"+suffix, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := open(t, url)
			kv := kvClient(t, s)
			if _, _, err := kv.Get(ctx, []byte("k"), nil); err != nil {
				t.Fatal(err)
			}
			// Clients, and only they, connect to the namespace's database.
			db := foreign(t, url)
			id := count(t, db, `SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '`+s.cfg.Namespace+`'`)
			exec(t, db, fmt.Sprintf("KILL CONNECTION %d", id))
			var err error
			for range 2 { // the first write may still reach the socket buffer
				if _, _, err = kv.Get(ctx, []byte("k"), nil); err != nil {
					break
				}
			}
			if errclass.Classify(err) != errclass.ClassUnavailable {
				t.Errorf("error = %v, class %s; want unavailable", err, errclass.Classify(err))
			}
			t.Log(err)
			if err := kv.Set(ctx, []byte("k"), nil, 0); errclass.Classify(err) != errclass.ClassUnavailable {
				t.Errorf("Set on a dead connection: %v, class %s", err, errclass.Classify(err))
			}
		})
	}

	t.Run("OneConnectionPerClient", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		s := open(t, url)
		db := foreign(t, url)
		q := `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '` + s.cfg.Namespace + `'`
		for i := 1; i <= 3; i++ {
			kv := storetest.KVClient(t, s)
			for range 10 {
				if err := kv.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
					t.Fatal(err)
				}
			}
			if n := count(t, db, q); n != i {
				t.Errorf("%d clients: %d connections", i, n)
			}
		}
		// Statements are prepared on the server, once per client.
		var name string
		var prepared int
		if err := db.QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'`).Scan(&name, &prepared); err != nil {
			t.Fatal(err)
		}
		if prepared < 9 {
			t.Errorf("Prepared_stmt_count = %d, want at least 3 per client", prepared)
		}
	})

	t.Run("KeyLength", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		kv := storetest.KVClient(t, open(t, url))
		long := []byte(strings.Repeat("k", MaxKeyLen))
		if err := kv.Set(ctx, long, []byte("v"), 0); err != nil {
			t.Fatalf("Set(%d-byte key): %v", len(long), err)
		}
		if err := kv.Set(ctx, append(long, 'x'), []byte("w"), 0); err == nil {
			t.Errorf("Set(%d-byte key) accepted", len(long)+1)
		}
		if got, ok, err := kv.Get(ctx, append(long, 'x'), nil); ok || err != nil {
			t.Errorf("Get(too long key) = %q, %v, %v", got, ok, err)
		}
	})
}

// TestUnreachable needs no server: nothing listens on the port.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = New(context.Background(), Config{URL: "mysql://u:hunter22@" + addr + "/db", Namespace: "sbt_x"})
	if err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("error = %v; want one naming %s without the password", err, addr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	t.Log(err)
	if errclass.Classify(err) != errclass.ClassUnavailable {
		t.Errorf("class = %s", errclass.Classify(err))
	}
}

// TestSilentServer: something accepts the connection and never speaks.
// ?timeout= bounds dial and handshake together.
func TestSilentServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	start := time.Now()
	_, err = New(context.Background(), Config{URL: "mariadb://u:hunter22@" + l.Addr().String() + "/db?timeout=1s", Namespace: "sbt_x"})
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) || strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("error = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v, want about 1 s", d)
	}
	t.Log(err)
}

func TestClassify(t *testing.T) {
	for num, want := range map[uint16]errclass.Class{
		1213: errclass.ClassConflict, 1205: errclass.ClassTimeout, 1969: errclass.ClassTimeout, 3024: errclass.ClassTimeout,
		1040: errclass.ClassUnavailable, 1053: errclass.ClassUnavailable, 1927: errclass.ClassUnavailable,
		1062: errclass.ClassOther, 1146: errclass.ClassOther,
	} {
		err := opErr("get", &mysql.MySQLError{Number: num, Message: "x"})
		if got := errclass.Classify(err); got != want {
			t.Errorf("%d: class %s, want %s", num, got, want)
		}
		if !strings.HasPrefix(err.Error(), "mysql: get: Error ") {
			t.Errorf("message %q", err)
		}
	}
	for err, want := range map[error]errclass.Class{
		context.DeadlineExceeded:                     errclass.ClassTimeout,
		driver.ErrBadConn:                            errclass.ClassUnavailable,
		fmt.Errorf("read: %w", mysql.ErrInvalidConn): errclass.ClassUnavailable,
		context.Canceled:                             errclass.ClassOther,
	} {
		if got := errclass.Classify(opErr("set", err)); got != want {
			t.Errorf("%v: class %s, want %s", err, got, want)
		}
	}
	if !errors.Is(opErr("x", context.Canceled), context.Canceled) {
		t.Error("opErr does not unwrap")
	}
}

func TestParseURL(t *testing.T) {
	for in, want := range map[string][3]string{ // addr, db, location
		"mysql://u:pw@db.example:3307/app":    {"db.example:3307", "app", "mysql://u@db.example:3307/app"},
		"mariadb://u@h/app?timeout=2s":        {"h:3306", "app", "mariadb://u@h:3306/app"},
		"mysql://u:p%40ss@[::1]:3306/":        {"[::1]:3306", "", "mysql://u@[::1]:3306/"},
		"mysql://h:3306/x":                    {"h:3306", "x", "mysql://h:3306/x"},
		"mysql://root@127.0.0.1:1/storebench": {"127.0.0.1:1", "storebench", "mysql://root@127.0.0.1:1/storebench"},
	} {
		cfg, loc, err := parseURL(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := [3]string{cfg.Addr, cfg.DBName, loc}; got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
		if cfg.InterpolateParams || cfg.Net != "tcp" {
			t.Errorf("%s: interpolateParams %v, net %s", in, cfg.InterpolateParams, cfg.Net)
		}
	}
	if cfg, _, _ := parseURL("mysql://u:p%40ss@h/db?timeout=2s"); cfg.Passwd != "p@ss" || cfg.Timeout != 2*time.Second {
		t.Errorf("password %q, timeout %v", cfg.Passwd, cfg.Timeout)
	}
	for _, c := range []Config{
		{URL: "postgres://u@h/db", Namespace: "a"},
		{URL: "mysql://u@h/db", Namespace: "a", Design: "memory-engine"},
		{URL: "mysql://u@h/db", Namespace: "A-b"},
		{URL: "mysql://u@h/db?bogus_param=%zz", Namespace: "a"},
		{URL: "", Namespace: "a"},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestDurability(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1"}, "redo log fsync every commit; binlog fsync every commit"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "2", "log_bin": "ON", "sync_binlog": "0"}, "redo log written every commit, fsync ~1/s: an OS crash may lose ~1 s; binlog not fsynced by the server (OS decides)"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "0", "log_bin": "OFF", "innodb_doublewrite": "OFF"}, "redo log flushed ~1/s: a crash may lose ~1 s; binlog off; doublewrite off: a torn page may corrupt data"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "100"}, "redo log fsync every commit; binlog fsync every 100 commits"},
	} {
		if got := durability(c.set); got != c.want {
			t.Errorf("%v: %q, want %q", c.set, got, c.want)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	storetest.BenchGet(b, open(b, serverURL(b)))
}

func BenchmarkSet(b *testing.B) {
	storetest.BenchSet(b, open(b, serverURL(b)))
}
