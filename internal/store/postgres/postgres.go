// Package postgres is the PostgreSQL store (pgx v5).
//
// Everything lives in schema <namespace>, created with
// COMMENT ON SCHEMA <namespace> IS 'storebench'; Reset and Close touch the
// schema only while that comment is present and refuse with
// store.ErrNotOwned otherwise. The data is one table
// kv(k bytea PRIMARY KEY, v bytea NOT NULL, expires_at timestamptz), expiry
// computed by the server's clock.
//
// One client is one pgx.Conn (no pool). Its three statements are prepared
// once when the client opens and executed through pgconn.ExecStatement with
// binary parameters and results: the same protocol messages pgx's default
// QueryExecModeCacheStatement sends (Bind/Execute/Sync on a named prepared
// statement, no Describe), without decoding into Go values on the hot path.
package postgres

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Designs: how the kv table is laid out. Each is switchable on its own so its
// effect can be measured alone.
const (
	// DesignLogged is a plain table with a btree primary key (the default).
	DesignLogged = "logged"
	// DesignUnlogged is CREATE UNLOGGED TABLE: no WAL, emptied after a crash.
	DesignUnlogged = "unlogged"
	// DesignHashIndex looks keys up through a hash index instead of a btree
	// primary key (a hash index cannot be unique: Set updates, else inserts).
	DesignHashIndex = "hash-index"
	// DesignCovering makes the primary key INCLUDE the value, so a read can be
	// an index-only scan once VACUUM has marked the pages all-visible.
	DesignCovering = "covering"
)

// Designs lists the design tunings; Config.Design combines them with commas
// ("unlogged,covering"), each switchable on its own.
var Designs = []string{DesignLogged, DesignUnlogged, DesignHashIndex, DesignCovering}

// design is a parsed Config.Design.
type design struct{ unlogged, hash, covering bool }

func parseDesign(s string) (design, error) {
	var d design
	if s == "" {
		return d, nil
	}
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case DesignLogged:
		case DesignUnlogged:
			d.unlogged = true
		case DesignHashIndex:
			d.hash = true
		case DesignCovering:
			d.covering = true
		default:
			return d, fmt.Errorf("postgres: unknown design %q (have %s; combine with commas)", part, strings.Join(Designs, ", "))
		}
	}
	if d.hash && d.covering {
		return d, errors.New("postgres: designs hash-index and covering exclude each other (a hash index cannot include columns)")
	}
	return d, nil
}

// Marker is the schema comment that makes a schema storebench's own.
const Marker = "storebench"

// DefaultConnectTimeout bounds connecting when the URL sets no connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// Config configures a PostgreSQL store.
type Config struct {
	// URL is a postgres:// URL (or a key=value connection string).
	URL string
	// Namespace is the schema this store creates and owns.
	Namespace string
	// Design is DesignLogged (default when "") or DesignUnlogged.
	Design string
}

// Validate checks the config without connecting.
func (c Config) Validate() error {
	_, designErr := parseDesign(c.Design)
	return store.CheckServerConfig("postgres", c.URL, CheckURL, designErr, c.Namespace)
}

// CheckURL parses a URL as New will, without connecting: every connection
// option pgx reads (sslmode, connect_timeout, target_session_attrs, the TLS
// files, ...), so a bad one is found before any work. Its errors quote no
// part of raw.
func CheckURL(raw string) error {
	_, err := parseConfig(raw)
	return err
}

// parseConfig is pgx.ParseConfig after store.ParseURL's stricter reading of
// a URL, with errors that quote no part of raw: pgx's quote the connection
// string, its password hidden only as far as pgx can tell it.
func parseConfig(raw string) (*pgx.ConnConfig, error) {
	if strings.Contains(raw, "://") {
		if _, err := store.ParseURL(raw); err != nil {
			return nil, err
		}
	}
	if err := checkReadFiles(raw); err != nil {
		return nil, errors.New(store.RedactText(err.Error(), raw))
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		reason := err.Error()
		if pe, ok := errors.AsType[*pgconn.ParseConfigError](err); ok {
			bare := *pe
			bare.ConnString = ""
			reason = strings.TrimPrefix(bare.Error(), "cannot parse ``: ")
		}
		return nil, errors.New(store.RedactText(reason, raw))
	}
	return cfg, nil
}

// maxReadFileMiB bounds each file pgx reads whole while it parses a URL:
// a system's whole CA bundle is about 200 KiB.
const maxReadFileMiB = 4

// readFiles are the settings that name a file pgx.ParseConfig reads with
// os.ReadFile, each with the variable that sets it from the environment
// and its default under the home directory (pgconn's defaultSettings).
var readFiles = []struct{ param, env, home string }{
	{"sslrootcert", "PGSSLROOTCERT", ".postgresql/root.crt"},
	{"sslcert", "PGSSLCERT", ".postgresql/postgresql.crt"},
	{"sslkey", "PGSSLKEY", ".postgresql/postgresql.key"},
	{"passfile", "PGPASSFILE", ".pgpass"},
	{"servicefile", "PGSERVICEFILE", ".pg_service.conf"},
}

// checkReadFiles refuses, before pgx reads them, the files a URL, the
// environment or the home directory name that would run storebench out of
// memory (/dev/zero) or hold it for ever (a FIFO nobody writes): only a
// regular file of at most maxReadFileMiB. One that does not exist is left
// to pgx, which says so (or, for a default, does without it).
func checkReadFiles(raw string) error {
	var query url.Values
	if u, err := url.Parse(raw); err == nil && strings.Contains(raw, "://") {
		query = u.Query()
	}
	home, _ := os.UserHomeDir()
	for _, f := range readFiles {
		path := cmp.Or(query.Get(f.param), os.Getenv(f.env))
		if path == "" && home != "" {
			path = filepath.Join(home, f.home)
		}
		if path == "" || f.param == "sslrootcert" && path == "system" {
			continue
		}
		if fi, err := os.Stat(path); err == nil {
			if err := store.CheckWholeFile(fi, maxReadFileMiB); err != nil {
				return fmt.Errorf("%s %s: %v", f.param, path, err)
			}
		}
	}
	return nil
}

func (c Config) design() string {
	if c.Design == "" {
		return DesignLogged
	}
	return c.Design
}

// Settle makes the table ready to be read after a bulk of writes, as a
// careful operator would before serving reads: VACUUM ANALYZE sets hint bits
// and the visibility map (which index-only scans on the covering design
// need) and refreshes the planner's statistics. Not timed.
func (s *Store) Settle(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	q := `VACUUM (ANALYZE) ` + s.schema + `.kv`
	if s.records != nil { // the ycsb records' table too (records.go)
		q += `, ` + s.schema + `.` + recordsTable
	}
	if _, err := s.admin.Exec(ctx, q); err != nil {
		return opErr("settle: vacuum analyze", err)
	}
	return nil
}

// Store is one schema in one PostgreSQL database.
type Store struct {
	cfg      Config
	pgcfg    *pgx.ConnConfig
	loc      string   // redacted location
	schema   string   // quoted identifier
	ddl      string   // the design's DDL, for the record
	ddlStmts []string // the same, one statement each
	getSQL   string
	setSQL   string
	delSQL   string
	addSQL   string // "" where the design has no unique key (hash-index)

	mu      sync.Mutex // guards admin (a pgx.Conn is not safe for concurrent use), closed and records
	admin   *pgx.Conn
	closed  bool
	records *store.RecordsSQL    // the records' statements (records.go), once set up
	ns      store.OwnedNamespace // Reset, Close, Detach and DropNamespace of the schema
}

var _ store.Store = (*Store)(nil)

// New connects, and creates the schema with its marker and table. A leftover
// schema of the same name is dropped and recreated if it carries the marker,
// and refused with store.ErrNotOwned if not.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s, err := adminStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	table := s.schema + ".kv"
	d, _ := parseDesign(cfg.Design) // validated above
	unlogged := ""
	if d.unlogged {
		unlogged = "UNLOGGED "
	}
	expiry := `now() + $3::int8 * interval '1 millisecond'`
	switch {
	case d.hash:
		s.ddlStmts = []string{
			`CREATE ` + unlogged + `TABLE ` + table + ` (k bytea NOT NULL, v bytea NOT NULL, expires_at timestamptz)`,
			`CREATE INDEX kv_k_hash ON ` + table + ` USING hash (k)`,
		}
		// One round trip: update the row, or insert it when there was none.
		// Two writers racing on one new key could both insert; the workloads
		// give each key to one writer.
		s.setSQL = `WITH u AS (UPDATE ` + table + ` SET v = $2, expires_at = ` + expiry + ` WHERE k = $1 RETURNING 1)
		INSERT INTO ` + table + ` (k, v, expires_at) SELECT $1, $2, ` + expiry + ` WHERE NOT EXISTS (SELECT 1 FROM u)`
		// No unique key: no ON CONFLICT, so no Add (addSQL stays "").
	case d.covering:
		s.ddlStmts = []string{`CREATE ` + unlogged + `TABLE ` + table + ` (k bytea NOT NULL, v bytea NOT NULL, expires_at timestamptz, PRIMARY KEY (k) INCLUDE (v, expires_at))`}
	default:
		s.ddlStmts = []string{`CREATE ` + unlogged + `TABLE ` + table + ` (k bytea PRIMARY KEY, v bytea NOT NULL, expires_at timestamptz)`}
	}
	if s.setSQL == "" {
		s.setSQL = `INSERT INTO ` + table + ` (k, v, expires_at) VALUES ($1, $2, ` + expiry + `)
		ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, expires_at = EXCLUDED.expires_at`
	}
	if !d.hash {
		// Add inserts, or overwrites a row only while it is expired: a
		// racing Add waits for the row lock, then sees the new row unexpired.
		s.addSQL = `INSERT INTO ` + table + ` AS t (k, v, expires_at) VALUES ($1, $2, ` + expiry + `)
		ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, expires_at = EXCLUDED.expires_at
		WHERE t.expires_at IS NOT NULL AND t.expires_at <= now()`
	}
	s.ddl = strings.Join(s.ddlStmts, ";\n")
	s.getSQL = `SELECT v FROM ` + table + ` WHERE k = $1 AND (expires_at IS NULL OR expires_at > now())`
	s.delSQL = `DELETE FROM ` + table + ` WHERE k = $1`
	if err := s.create(ctx); err != nil {
		s.admin.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

// newStore is a Store of a validated cfg, not yet connected.
func newStore(cfg Config) *Store {
	pgcfg, _ := parseConfig(cfg.URL) // checked by Validate
	if pgcfg.ConnectTimeout == 0 {
		pgcfg.ConnectTimeout = DefaultConnectTimeout
	}
	if pgcfg.RuntimeParams == nil {
		pgcfg.RuntimeParams = map[string]string{}
	}
	if pgcfg.RuntimeParams["application_name"] == "" {
		pgcfg.RuntimeParams["application_name"] = "storebench"
	}
	s := &Store{cfg: cfg, pgcfg: pgcfg, schema: `"` + cfg.Namespace + `"`}
	s.loc = (&url.URL{Scheme: "postgres", User: url.User(pgcfg.User), Host: s.addr(), Path: "/" + pgcfg.Database}).String()
	s.ns = store.OwnedNamespace{
		Kind: "postgres", Noun: "schema", Quoted: s.schema, Marker: fmt.Sprintf("%q comment", Marker),
		ResetSQL: `TRUNCATE ` + s.schema + `.kv`, DropAll: s.dropSchema,
		Mu: &s.mu, Closed: &s.closed, ErrClosed: errClosed,
		Owned: s.owned,
		Exec: func(ctx context.Context, q string) error {
			_, err := s.admin.Exec(ctx, q)
			return err
		},
		Disconnect: func(ctx context.Context) error { return s.admin.Close(ctx) },
		OpErr:      opErr,
	}
	return s
}

// adminStore validates cfg and connects the store's administrative
// connection, creating nothing: New's first step, and the whole of it for
// work on a namespace outside a run (Namespaces, DropNamespace).
func adminStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := newStore(cfg)
	var err error
	if s.admin, err = s.connect(ctx, false); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) addr() string {
	return net.JoinHostPort(s.pgcfg.Host, strconv.Itoa(int(s.pgcfg.Port)))
}

// adminTimeout bounds a sampling query on the shared admin connection
// (store.SharedContext).
const adminTimeout = 30 * time.Second

// connect opens a connection; with block, its socket reads and writes with
// blocking system calls (blockio), also while pgx sets it up.
func (s *Store) connect(ctx context.Context, block bool) (*pgx.Conn, error) {
	cfg := s.pgcfg
	if block {
		cfg = s.pgcfg.Copy()
		dial := cfg.DialFunc
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return blockio.Wrap(c)
		}
	}
	return s.connectConfig(ctx, cfg)
}

// connectConfig connects with cfg, s's configuration or a copy of it.
func (s *Store) connectConfig(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, errclass.WithClass(errclass.ClassUnavailable,
			fmt.Errorf("postgres: connect %s: %s", s.addr(), connectReason(err, s.cfg.URL)))
	}
	return conn, nil
}

// connectReason is why pgx could not connect, in one line. pgx tries every
// address and, under sslmode=prefer (the default), TLS then plaintext, and
// joins each attempt's error under a header line: a wrong password read as
// three lines, one of them the server's refusal of TLS, which is no fault.
// The server's own answer (a wrong password, an unknown database, too many
// connections) is the cause when there is one; otherwise the last attempt's.
func connectReason(err error, raw string) string {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		err = pe
	} else if joined, ok := errors.Unwrap(err).(interface{ Unwrap() []error }); ok {
		if attempts := joined.Unwrap(); len(attempts) > 0 {
			err = attempts[len(attempts)-1]
		}
	}
	return strings.Join(strings.Fields(store.RedactText(err.Error(), raw)), " ")
}

// owned reports whether the schema exists and whether it carries the marker.
func (s *Store) owned(ctx context.Context) (exists, owned bool, err error) {
	var comment *string
	err = s.admin.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, s.cfg.Namespace).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, opErr("check schema owner", err)
	}
	return true, comment != nil && *comment == Marker, nil
}

func (s *Store) create(ctx context.Context) error {
	exists, owned, err := s.owned(ctx)
	if err != nil {
		return err
	}
	if exists && !owned {
		return fmt.Errorf("postgres: schema %s exists without the %q comment: %w", s.schema, Marker, store.ErrNotOwned)
	}
	if exists { // ours, left over from an earlier run
		if err := s.dropSchema(ctx); err != nil {
			return err
		}
	}
	tx, err := s.admin.Begin(ctx)
	if err != nil {
		return opErr("create schema", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	stmts := []string{
		`CREATE SCHEMA ` + s.schema,
		`COMMENT ON SCHEMA ` + s.schema + ` IS '` + Marker + `'`,
	}
	stmts = append(stmts, s.ddlStmts...)
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return opErr("create schema", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return opErr("create schema", err)
	}
	return nil
}

var errClosed = errors.New("postgres: store is closed")

// Open connects a new client and prepares its statements.
func (s *Store) Open(ctx context.Context) (store.Client, error) {
	c, err := s.open(ctx, blockio.Use(ctx))
	if err != nil {
		return nil, err
	}
	for _, sd := range []**pgconn.StatementDescription{&c.get, &c.set, &c.del} {
		d := *sd
		prepared, err := c.pg.Prepare(ctx, d.Name, d.SQL, d.ParamOIDs)
		if err != nil {
			c.conn.Close(context.WithoutCancel(ctx))
			return nil, opErr("prepare "+d.Name, err)
		}
		*sd = prepared
	}
	return c, nil
}

var _ store.PerRequestOpener = (*Store)(nil)

// OpenPerRequest connects a client for one operation
// (store.PerRequestOpener), which it runs as an unnamed statement: parse,
// bind and execute in one round trip, as an application's parameterized
// query (PHP's pg_query_params). Open's three prepares would cost a request
// three round trips more than its query.
func (s *Store) OpenPerRequest(ctx context.Context) (store.Client, error) {
	c, err := s.open(ctx, false)
	if err != nil {
		return nil, err
	}
	c.unnamed = true
	return c, nil
}

// open connects a client whose statements are described but not prepared.
func (s *Store) open(ctx context.Context, block bool) (*Client, error) {
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	var conn *pgx.Conn
	var pc *polledConn
	var err error
	if block {
		conn, err = s.connect(ctx, true)
	} else {
		conn, pc, err = s.connectPolled(ctx)
	}
	if err != nil {
		return nil, err
	}
	const bytea, int8 = 17, 20
	var add *pgconn.StatementDescription
	if s.addSQL != "" {
		add = &pgconn.StatementDescription{Name: addName, SQL: s.addSQL, ParamOIDs: []uint32{bytea, bytea, int8}}
	}
	return &Client{
		conn: conn, pg: conn.PgConn(), polled: pc, table: pgx.Identifier{s.cfg.Namespace, "kv"}, blocking: block,
		get: &pgconn.StatementDescription{Name: "sb_get", SQL: s.getSQL, ParamOIDs: []uint32{bytea}},
		set: &pgconn.StatementDescription{Name: "sb_set", SQL: s.setSQL, ParamOIDs: []uint32{bytea, bytea, int8}},
		del: &pgconn.StatementDescription{Name: "sb_del", SQL: s.delSQL, ParamOIDs: []uint32{bytea}},
		add: add,
	}, nil
}

// exec runs sd with the first n of c.params, all in binary: the prepared
// statement, or on a per-request client the unnamed one.
// Its one write goes out with the first read of the reply (pollconn.go).
func (c *Client) exec(ctx context.Context, sd *pgconn.StatementDescription, n int) *pgconn.ResultReader {
	if c.polled != nil {
		c.polled.setArm(true)
		defer c.polled.setArm(false)
	}
	if c.unnamed {
		return c.pg.ExecParams(ctx, sd.SQL, c.params[:n], sd.ParamOIDs, binary1, binary1)
	}
	return c.pg.ExecStatement(ctx, sd, c.params[:n], binary1, binary1)
}

// ClientIO says how the connection waits for the server (blockio.Mode*).
func (c *Client) ClientIO() string { return blockio.ModeOf(c.blocking) }

// settingNames are read back with SHOW for the result file.
var settingNames = []string{"server_version", "synchronous_commit", "fsync", "shared_buffers", "wal_level", "full_page_writes", "wal_writer_delay"}

// Info reads back the server version, the effective settings and the table's
// persistence as pg_class records it.
func (s *Store) Info(ctx context.Context) (store.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.Info{}, errClosed
	}
	set := map[string]string{
		"design":    s.cfg.design(),
		"ddl":       s.ddl,
		"exec_mode": "named prepared statements, prepared once per connection, run with pgconn.ExecStatement (binary format)",
		"client":    "pgx v5 pgx.Conn, one connection per client, prepared statements; a connection per op: its one query as an unnamed statement (one round trip)",
	}
	for _, name := range settingNames {
		var v string
		if err := s.admin.QueryRow(ctx, `SHOW `+name).Scan(&v); err != nil {
			return store.Info{}, opErr("info: SHOW "+name, err)
		}
		set[name] = v
	}
	var persistence string
	if err := s.admin.QueryRow(ctx, `SELECT relpersistence::text FROM pg_class WHERE oid = $1::regclass`, s.schema+".kv").Scan(&persistence); err != nil {
		return store.Info{}, opErr("info: table persistence", err)
	}
	set["table_persistence"] = map[string]string{"p": "permanent", "u": "unlogged", "t": "temporary"}[persistence]
	return store.Info{
		Kind:       "postgres",
		Version:    set["server_version"],
		Location:   s.loc,
		Settings:   set,
		Durability: durability(set, persistence == "u"),
		Namespace:  s.cfg.Namespace,
	}, nil
}

// durability says in words what a crash loses under the settings read back.
func durability(set map[string]string, unlogged bool) string {
	var d string
	switch {
	case unlogged:
		d = "UNLOGGED: table emptied after a crash"
	case set["fsync"] == "off":
		d = "fsync off: an OS crash or power loss may lose or corrupt data"
	case set["synchronous_commit"] == "off":
		lost := "3 × wal_writer_delay"
		if set["wal_writer_delay"] == "200ms" {
			lost = "~0.6 s"
		}
		d = "WAL, commit not waited for: last " + lost + " may be lost"
	default:
		d = "fsync every commit (WAL)"
	}
	if set["full_page_writes"] == "off" && !unlogged {
		d += "; full_page_writes off: a torn page may corrupt data"
	}
	return d
}

// Reset empties the table, after checking the schema's marker.
func (s *Store) Reset(ctx context.Context) error { return s.ns.Reset(ctx) }

// Close drops the schema, only if it carries the marker, and disconnects.
// Closing twice is not an error.
func (s *Store) Close(ctx context.Context) error { return s.ns.Close(ctx) }

// Client is one connection with its prepared statements.
type Client struct {
	conn          *pgx.Conn
	pg            *pgconn.PgConn
	polled        *polledConn // its socket, when requests go out with reads (pollconn.go)
	get, set, del *pgconn.StatementDescription
	add           *pgconn.StatementDescription // nil: the design cannot add
	addPrepared   bool                         // add is prepared (on the first Add)
	unnamed       bool                         // a per-request client: get, set and del are not prepared
	params        [3][]byte
	bind          pgproto3.Bind    // getMessages' Bind, reused
	execute       pgproto3.Execute // and its Execute and Sync
	sync          pgproto3.Sync
	ttl           [8]byte
	table         pgx.Identifier // schema.kv, for COPY (batch.go)
	row           [2]any         // Load's row, reused
	order         []int          // SetBatch's statements in key order, reused
	blocking      bool           // its socket blocks (blockio.Wrap)
}

var (
	_ store.KV    = (*Client)(nil)
	_ store.Adder = (*Client)(nil)
)

// Close closes the connection.
func (c *Client) Close() error { return closeConn(c.conn, "close client") }

// closeConn closes a connection within 5 s, so an unresponsive server
// cannot hold the caller; its error is op's.
func closeConn(conn *pgx.Conn, op string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Close(ctx); err != nil {
		return opErr(op, err)
	}
	return nil
}

// binary1 is the format code list meaning "every parameter / result in binary".
var binary1 = []int16{1}

// Get appends the unexpired value of key to dst[:0]. Get and Set pass pgx
// store.SyncContext's context: on a cancellable one pgx registers a
// context.AfterFunc per query on the run's shared context (measured: ~1.4 µs
// of client CPU per op at 8 clients).
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return dst, false, opErr("get", err)
	}
	c.params[0] = store.NonNil(key)
	ok := false
	if c.unnamed || c.pg.IsClosed() {
		rr := c.exec(ctx, c.get, 1)
		for rr.NextRow() {
			dst = append(dst, rr.Values()[0]...)
			ok = true
		}
		_, err = rr.Close()
	} else {
		dst, ok, err = c.getMessages(ctx, dst)
	}
	c.params[0] = nil // keep no reference to the caller's key
	if err != nil {
		return dst[:0], false, opErr("get", err)
	}
	return dst, ok, nil
}

// addName is Add's prepared statement.
const addName = "sb_add"

// Add inserts key unless it holds an unexpired row; ttl as Set's. The
// hash-index design has no unique key to conflict on: it cannot add. A
// client's first Add prepares the statement: one more round trip.
func (c *Client) Add(ctx context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	if c.add == nil {
		return false, opErr("add", fmt.Errorf("the %s design has no unique key to add on: %w", DesignHashIndex, store.ErrUnsupported))
	}
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return false, opErr("add", err)
	}
	if !c.unnamed && !c.addPrepared {
		// Prepared on first use, not at Open: only the cache-aside lease
		// adds, and every other workload's clients would pay the round trip.
		if c.add, err = c.pg.Prepare(ctx, c.add.Name, c.add.SQL, c.add.ParamOIDs); err != nil {
			return false, opErr("prepare "+addName, err)
		}
		c.addPrepared = true
	}
	c.setParams(key, val, ttl)
	tag, err := c.exec(ctx, c.add, 3).Close()
	c.params[0], c.params[1] = nil, nil
	if err != nil {
		return false, opErr("add", err)
	}
	return tag.RowsAffected() == 1, nil
}

// setParams puts Set's and Add's parameters in c.params: key, val, and the
// ttl in milliseconds, rounded up (NULL: no expiry).
func (c *Client) setParams(key, val []byte, ttl time.Duration) {
	c.params[0], c.params[1], c.params[2] = store.NonNil(key), store.NonNil(val), nil
	if ttl > 0 {
		ms := (ttl + time.Millisecond - 1) / time.Millisecond
		binary.BigEndian.PutUint64(c.ttl[:], uint64(ms))
		c.params[2] = c.ttl[:]
	}
}

// Set upserts key; ttl > 0 becomes expires_at = now() + ttl on the server,
// in whole milliseconds (rounded up, so a tiny ttl does not mean "expired").
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("set", err)
	}
	c.setParams(key, val, ttl)
	_, err = c.exec(ctx, c.set, 3).Close()
	c.params[0], c.params[1] = nil, nil
	if err != nil {
		return opErr("set", err)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	c.params[0] = store.NonNil(key)
	_, err := c.exec(ctx, c.del, 1).Close()
	c.params[0] = nil
	if err != nil {
		return opErr("delete", err)
	}
	return nil
}

func opErr(op string, err error) error { return store.NewOpError("postgres", op, err, classify(err)) }

// classify maps SQLSTATEs and connection failures to error classes; ""
// leaves the decision to errclass.Classify.
func classify(err error) errclass.Class {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001" || pe.Code == "40P01": // serialization failure, deadlock
			return errclass.ClassConflict
		case pe.Code == "57014" || pe.Code == "55P03": // query canceled (statement_timeout), lock not available
			return errclass.ClassTimeout
		case strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03":
			return errclass.ClassUnavailable // connection exception, admin/crash shutdown, cannot connect now
		}
		return ""
	}
	var ce *pgconn.ConnectError
	switch {
	case pgconn.Timeout(err):
		return errclass.ClassTimeout
	case errors.As(err, &ce):
		return errclass.ClassUnavailable
	}
	return ""
}
