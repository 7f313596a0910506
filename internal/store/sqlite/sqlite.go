// Package sqlite is the SQLite store (github.com/mattn/go-sqlite3, cgo).
//
// Data lives in one table "<namespace>_kv"(k BLOB PRIMARY KEY, v BLOB NOT
// NULL, expires_at INTEGER) WITHOUT ROWID, expires_at in Unix milliseconds
// (NULL = no expiry). Ownership is recorded as a row in storebench_owned(name):
// Reset and Close touch "<namespace>_kv" only while that row exists, and
// refuse with store.ErrNotOwned otherwise.
//
// One store is one *sql.DB; each client pins one connection with db.Conn and
// prepares its statements on it. Why not one *sql.DB per client: the same
// one-connection-per-client result, but the store would have to track N
// pools; with a pinned *sql.Conn the statements are prepared once on that
// connection and never re-prepared, and Close can release everything.
//
// journal_mode is a property of the database file: pointing the store at an
// existing file in another mode switches that file to the configured mode.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
)

// Config configures a SQLite store.
type Config struct {
	// Path is the database file; it is created when missing.
	Path string
	// Namespace names the table, "<namespace>_kv".
	Namespace string
	// JournalMode is DELETE, TRUNCATE, PERSIST, MEMORY, WAL or OFF; "" means WAL.
	JournalMode string
	// Synchronous is OFF, NORMAL, FULL or EXTRA; "" means NORMAL.
	Synchronous string
	// BusyTimeout is how long a statement waits for a lock; 0 means 5 s.
	BusyTimeout time.Duration
}

func (c *Config) setDefaults() {
	if c.JournalMode == "" {
		c.JournalMode = "WAL"
	}
	if c.Synchronous == "" {
		c.Synchronous = "NORMAL"
	}
	if c.BusyTimeout == 0 {
		c.BusyTimeout = 5 * time.Second
	}
	c.JournalMode = strings.ToUpper(c.JournalMode)
	c.Synchronous = strings.ToUpper(c.Synchronous)
}

// Validate checks the config after applying defaults.
func (c Config) Validate() error {
	c.setDefaults()
	if c.Path == "" || strings.HasPrefix(c.Path, ":") || strings.HasPrefix(c.Path, "file:") {
		return errors.New("sqlite: want a file path (not :memory: or a file: URI)")
	}
	switch c.JournalMode {
	case "DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF":
	default:
		return fmt.Errorf("sqlite: journal mode %q: want DELETE, TRUNCATE, PERSIST, MEMORY, WAL or OFF", c.JournalMode)
	}
	switch c.Synchronous {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return fmt.Errorf("sqlite: synchronous %q: want OFF, NORMAL, FULL or EXTRA", c.Synchronous)
	}
	if c.BusyTimeout < 0 {
		return errors.New("sqlite: negative busy timeout")
	}
	return store.ValidNamespace(c.Namespace)
}

// CheckURL accepts a sqlite URL that is a local path and nothing else, before
// any work (store.CheckPathURL).
func CheckURL(raw string) error { return store.CheckPathURL(raw, "synchronous: FULL") }

// Store is one table in one SQLite database file.
type Store struct {
	cfg         Config
	db          *sql.DB
	table       string // quoted "<namespace>_kv"
	createdFile bool
	getSQL      string
	setSQL      string
	delSQL      string

	mu      sync.Mutex
	closed  bool
	records *store.RecordsSQL // the records' statements (records.go), once set up; under mu
}

var _ store.Store = (*Store)(nil)

// New opens (or creates) the database file, records the namespace in
// storebench_owned and creates its table. A leftover table of the same
// namespace is dropped and recreated if it is recorded as owned, and refused
// with store.ErrNotOwned if not.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s, err := newStore(cfg)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(s.cfg.Path)
	s.createdFile = errors.Is(statErr, fs.ErrNotExist)
	if err := s.openDB(); err != nil {
		return nil, err
	}
	if err := s.create(ctx); err != nil {
		s.db.Close()
		if s.createdFile {
			removeFiles(s.cfg.Path)
		}
		return nil, err
	}
	return s, nil
}

// newStore validates cfg and makes the Store that New and Attach start
// from: the absolute path, the table and its statements, no database yet.
func newStore(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	p, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	cfg.Path = p
	s := &Store{cfg: cfg}
	s.table = `"` + cfg.Namespace + `_kv"`
	s.getSQL = `SELECT v FROM ` + s.table + ` WHERE k = ? AND (expires_at IS NULL OR expires_at > ?)`
	s.setSQL = `INSERT INTO ` + s.table + `(k, v, expires_at) VALUES (?, ?, ?)
		ON CONFLICT(k) DO UPDATE SET v = excluded.v, expires_at = excluded.expires_at`
	s.delSQL = `DELETE FROM ` + s.table + ` WHERE k = ?`
	return s, nil
}

// openDB opens the database handle. The DSN options apply the PRAGMAs on
// every new connection.
func (s *Store) openDB() error {
	dsn := "file:" + (&url.URL{Path: s.cfg.Path}).EscapedPath() + "?" + url.Values{
		"_journal_mode": {s.cfg.JournalMode},
		"_synchronous":  {s.cfg.Synchronous},
		"_busy_timeout": {strconv.FormatInt(s.cfg.BusyTimeout.Milliseconds(), 10)},
		"_txlock":       {"immediate"}, // admin transactions take the write lock first: no upgrade deadlocks
	}.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.cfg.Path, err)
	}
	s.db = db
	return nil
}

// beginBusy begins a transaction, retrying for up to busy_timeout while the
// file is busy: opening a connection applies journal_mode, and while another
// connection opens the same WAL file SQLite can answer SQLITE_BUSY without
// calling the busy handler (seen: parallel stores of one file in tests).
func (s *Store) beginBusy(ctx context.Context) (*sql.Tx, error) {
	deadline := time.Now().Add(s.cfg.BusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		tx, err := s.db.BeginTx(ctx, nil)
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().Add(wait).After(deadline) {
			return tx, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// create runs in one IMMEDIATE transaction (the DSN's _txlock), so another
// store of the same file cannot drop storebench_owned in between.
func (s *Store) create(ctx context.Context) error {
	tx, err := s.beginBusy(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", s.cfg.Path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, ownedTableDDL); err != nil {
		return fmt.Errorf("sqlite: %s: %w", s.cfg.Path, err)
	}
	exists, owned, err := s.state(ctx, tx)
	if err != nil {
		return err
	}
	if exists && !owned {
		return fmt.Errorf("sqlite: table %s exists but is not recorded in storebench_owned: %w", s.table, store.ErrNotOwned)
	}
	stmts := []string{
		`DROP TABLE IF EXISTS ` + s.table, // only reached when owned: a leftover of ours
		`CREATE TABLE ` + s.table + ` (k BLOB PRIMARY KEY, v BLOB NOT NULL, expires_at INTEGER) WITHOUT ROWID`,
		`INSERT OR REPLACE INTO storebench_owned (name, created_at) VALUES ('` + s.cfg.Namespace + `_kv', datetime('now'))`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: create %s: %w", s.table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", s.table, err)
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ownedTableDDL creates the table whose rows name the tables storebench
// made, the only ones it drops.
const ownedTableDDL = `CREATE TABLE IF NOT EXISTS storebench_owned (name TEXT PRIMARY KEY, created_at TEXT NOT NULL)`

// tableState reports whether table name exists and whether storebench_owned
// lists it.
func tableState(ctx context.Context, q querier, name string) (exists, owned bool, err error) {
	err = q.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?),
		EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'storebench_owned')
			AND EXISTS (SELECT 1 FROM storebench_owned WHERE name = ?)`, name, name).Scan(&exists, &owned)
	return exists, owned, err
}

// state reports whether the table exists and whether storebench_owned lists it.
func (s *Store) state(ctx context.Context, q querier) (exists, owned bool, err error) {
	exists, owned, err = tableState(ctx, q, s.cfg.Namespace+"_kv")
	if err != nil {
		return false, false, fmt.Errorf("sqlite: ownership of %s: %w", s.table, err)
	}
	return exists, owned, nil
}

func (s *Store) checkOwned(ctx context.Context, q querier, op string) error {
	if s.closed {
		return errClosed
	}
	return s.refuseUnowned(ctx, q, op)
}

// refuseUnowned is checkOwned on a store that may be closing.
func (s *Store) refuseUnowned(ctx context.Context, q querier, op string) error {
	exists, owned, err := s.state(ctx, q)
	if err != nil {
		return err
	}
	if exists && !owned {
		return fmt.Errorf("sqlite: %s: table %s is not recorded in storebench_owned: %w", op, s.table, store.ErrNotOwned)
	}
	return nil
}

var errClosed = errors.New("sqlite: store is closed")

// pin takes one connection of the store's pool for the caller alone; a
// closed store gives errClosed, a failure is op's error.
func (s *Store) pin(ctx context.Context, op string) (*sql.Conn, error) {
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return conn, nil
}

// Open pins one connection and prepares the client's statements on it.
func (s *Store) Open(ctx context.Context) (store.Client, error) {
	conn, err := s.pin(ctx, "open client")
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn}
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{{&c.get, s.getSQL}, {&c.set, s.setSQL}, {&c.del, s.delSQL}} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.q); err != nil {
			c.Close()
			return nil, fmt.Errorf("sqlite: prepare: %w", err)
		}
	}
	return c, nil
}

// Info reads back the effective PRAGMAs and the library version.
func (s *Store) Info(ctx context.Context) (store.Info, error) {
	conn, err := s.pin(ctx, "info")
	if err != nil {
		return store.Info{}, err
	}
	defer conn.Close()
	var version string
	if err := conn.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&version); err != nil {
		return store.Info{}, fmt.Errorf("sqlite: info: %w", err)
	}
	set := map[string]string{"driver": "github.com/mattn/go-sqlite3 (database/sql, one pinned *sql.Conn per client, prepared statements)"}
	for _, p := range []string{"journal_mode", "synchronous", "busy_timeout", "page_size", "cache_size", "wal_autocheckpoint", "locking_mode"} {
		var v string
		if err := conn.QueryRowContext(ctx, `PRAGMA `+p).Scan(&v); err != nil {
			return store.Info{}, fmt.Errorf("sqlite: info: PRAGMA %s: %w", p, err)
		}
		set[p] = v
	}
	set["synchronous"] = syncName(set["synchronous"])
	set["journal_mode"] = strings.ToUpper(set["journal_mode"])
	set["ddl"] = `CREATE TABLE ` + s.table + ` (k BLOB PRIMARY KEY, v BLOB NOT NULL, expires_at INTEGER) WITHOUT ROWID`
	return store.Info{
		Kind:       "sqlite",
		Version:    version,
		Location:   s.cfg.Path,
		Settings:   set,
		Durability: Durability(set["journal_mode"], set["synchronous"]),
		Namespace:  s.cfg.Namespace,
	}, nil
}

func syncName(v string) string {
	switch v {
	case "0":
		return "OFF"
	case "1":
		return "NORMAL"
	case "2":
		return "FULL"
	case "3":
		return "EXTRA"
	}
	return v
}

// Durability says in words what a crash loses under journal mode j and
// synchronous setting sync (as PRAGMA reads them back, upper case).
func Durability(j, sync string) string {
	switch {
	case j == "OFF" || j == "MEMORY":
		return "journal " + j + ": a crash in the middle of a commit may corrupt the database"
	case sync == "OFF":
		return "no fsync: an OS crash or power loss may lose or corrupt recent commits; a process crash loses nothing"
	case j == "WAL" && sync == "NORMAL":
		return "WAL, fsync at checkpoint: a power loss may lose the last commits; a process crash loses nothing"
	case j == "WAL":
		return "fsync every commit (WAL)"
	case sync == "NORMAL":
		return "fsync every commit (rollback journal, NORMAL: a power loss at the wrong moment may corrupt the database)"
	}
	return "fsync every commit (rollback journal)"
}

// CrashLoss says what the database loses, under the journal_mode and
// synchronous settings Info records, when the writing process is SIGKILLed
// (processCrash) and when the power fails (powerLoss): the durability
// workload's expectations.
func CrashLoss(set map[string]string) (processCrash, powerLoss string) {
	j, sync := strings.ToUpper(set["journal_mode"]), strings.ToUpper(set["synchronous"])
	switch {
	case j == "OFF" || j == "MEMORY":
		return "nothing committed, but a kill in the middle of a commit can corrupt the database (journal " + j + ")",
			"recent commits, and the database may be corrupt (journal " + j + ")"
	case sync == "OFF":
		return "nothing committed: every commit is written to the OS before it returns",
			"recent commits, and the database may be corrupt (no fsync at all)"
	case j == "WAL" && sync == "NORMAL":
		return "nothing committed: the WAL is written to the OS at every commit",
			"the commits since the last checkpoint's fsync (WAL, synchronous=NORMAL); never corrupt"
	case j == "DELETE" && sync != "EXTRA":
		// Measured through power cuts: the journal's unlink is the
		// commit, and a name change needs its directory's fsync.
		return "nothing committed",
			"the last commit: it ends by unlinking the journal, and only synchronous=EXTRA fsyncs the directory after that, so the journal can come back and roll it back"
	}
	return "nothing committed", "nothing committed (fsync at every commit), if the disk honours fsync"
}

// Reset deletes every row of the namespace's table.
func (s *Store) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return inTx(ctx, s.db, "reset", func(tx *sql.Tx) error {
		if err := s.checkOwned(ctx, tx, "reset"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+s.table); err != nil {
			return fmt.Errorf("sqlite: reset: %w", err)
		}
		return nil
	})
}

// Close drops the table and its ownership row (the ownership table too when
// it is empty), closes the database and, when this store created the file and
// nothing else is left in it, removes the file. Closing twice is not an error.
func (s *Store) Close(ctx context.Context) error {
	return store.EndOnce(&s.mu, &s.closed, func() error {
		err := s.drop(ctx)
		var left int
		if err == nil {
			err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&left)
		}
		if cerr := s.db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("sqlite: close: %w", cerr)
		}
		if err == nil && s.createdFile && left == 0 {
			removeFiles(s.cfg.Path)
		}
		return err
	})
}

// drop checks ownership and drops, in one transaction.
func (s *Store) drop(ctx context.Context) error {
	return inTx(ctx, s.db, "close", func(tx *sql.Tx) error {
		if err := s.refuseUnowned(ctx, tx, "close"); err != nil {
			return err
		}
		fail := func(err error) error { return fmt.Errorf("sqlite: close: %w", err) }
		if err := s.dropRecords(ctx, tx); err != nil {
			return fail(err)
		}
		for _, q := range []string{
			`DROP TABLE IF EXISTS ` + s.table,
			`DELETE FROM storebench_owned WHERE name = '` + s.cfg.Namespace + `_kv'`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fail(err)
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM storebench_owned`).Scan(&n); err != nil {
			return fail(err)
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, `DROP TABLE storebench_owned`); err != nil {
				return fail(err)
			}
		}
		return nil
	})
}

// txBeginner is a database or one of its connections.
type txBeginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// inTx runs f in one transaction of db, committed when f succeeds and
// rolled back otherwise; a failed begin or commit is op's error. f's
// errors are returned as they are.
func inTx(ctx context.Context, db txBeginner, op string, f func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

func removeFiles(p string) {
	for _, f := range []string{p, p + "-wal", p + "-shm", p + "-journal"} {
		_ = os.Remove(f)
	}
}

// Client is one pinned SQLite connection with its prepared statements.
type Client struct {
	conn          *sql.Conn
	get, set, del *sql.Stmt
}

var _ store.KV = (*Client)(nil)

// Close closes the statements and returns the connection to the store.
func (c *Client) Close() error {
	for _, st := range []*sql.Stmt{c.get, c.set, c.del} {
		if st != nil {
			st.Close()
		}
	}
	if err := c.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("sqlite: close client: %w", err)
	}
	return nil
}

// Get appends the unexpired value of key to dst[:0].
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return dst, false, opErr("get", err)
	}
	rows, err := c.get.QueryContext(ctx, store.NonNil(key), time.Now().UnixMilli())
	return readValue(rows, err, dst, "get")
}

// Set upserts key; ttl > 0 stores an expiry in Unix milliseconds.
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("set", err)
	}
	var exp any
	if ttl > 0 {
		exp = time.Now().Add(ttl).UnixMilli()
	}
	if _, err := c.set.ExecContext(ctx, store.NonNil(key), store.NonNil(val), exp); err != nil {
		return opErr("set", err)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("delete", err)
	}
	if _, err := c.del.ExecContext(ctx, store.NonNil(key)); err != nil {
		return opErr("delete", err)
	}
	return nil
}

// readValue is the value a query (rows, err) read, appended to dst as
// appendValue does; a failed query or read is op's error.
func readValue(rows *sql.Rows, err error, dst []byte, op string) ([]byte, bool, error) {
	if err != nil {
		return dst, false, opErr(op, err)
	}
	dst, ok, err := appendValue(rows, dst)
	if err != nil {
		return dst, false, opErr(op, err)
	}
	return dst, ok, nil
}

// appendValue appends the one column of rows' first row, if any, to dst and
// closes rows; on an error dst comes back empty.
func appendValue(rows *sql.Rows, dst []byte) ([]byte, bool, error) {
	ok := rows.Next()
	if ok {
		var raw sql.RawBytes // scanned without a copy; valid until Next/Close
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return dst[:0], false, err
		}
		dst = append(dst, raw...)
	}
	if err := rows.Close(); err != nil {
		return dst[:0], false, err
	}
	if err := rows.Err(); err != nil {
		return dst[:0], false, err
	}
	return dst, ok, nil
}

func opErr(op string, err error) error { return store.NewOpError("sqlite", op, err, classify(err)) }

// classify reads SQLite's lock errors and a dead connection; "" leaves the
// decision to errclass.Classify.
func classify(err error) errclass.Class {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy: // waited busy_timeout for a lock
			return errclass.ClassTimeout
		case sqlite3.ErrLocked:
			return errclass.ClassConflict
		}
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return errclass.ClassUnavailable
	}
	return ""
}
