// Package mysql is the MariaDB / MySQL store (github.com/go-sql-driver/mysql).
//
// Everything lives in a database named after the namespace. The database is
// marked as storebench's own by a table storebench_owner holding one row
// 'storebench', table and row created in one statement (CREATE TABLE ... AS
// SELECT), so MySQL (which has no CREATE DATABASE ... COMMENT) and MariaDB
// behave alike. Reset and Close touch the database only while that row is
// there and refuse with store.ErrNotOwned otherwise. The data is one table
// kv(k VARBINARY(3072) PRIMARY KEY, v LONGBLOB NOT NULL, expires_at BIGINT),
// expires_at in milliseconds since the epoch by the server's clock.
//
// One client is one driver connection, used without database/sql: the
// driver.Conn comes straight from the driver's Connector, so there is no pool
// that could silently reconnect and retry a failed operation, and no
// database/sql layer that starts a goroutine per query when the context can be
// cancelled. Its three statements are prepared on the server once, when the
// client opens (COM_STMT_PREPARE), and run with COM_STMT_EXECUTE in the binary
// protocol: the counterpart of pgx's prepared statements. A context's end
// interrupts a call through context.AfterFunc and a socket deadline, as in
// pgx, instead of the driver's per-call handoff to a watcher goroutine (see
// Client.watch). Clients connect to the namespace database, which also
// identifies them in SHOW PROCESSLIST.
//
// The store's own administrative connection (create, check, reset, drop,
// Info) is a database/sql pool of one connection, which may reconnect after a
// long idle.
package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Designs: how the kv table is laid out.
const (
	// DesignInnoDB is an InnoDB table with the key as clustered primary key
	// (the default).
	DesignInnoDB = "innodb"
)

// Marker is the row of table OwnerTable that makes a database storebench's own.
const (
	Marker     = "storebench"
	OwnerTable = "storebench_owner"
)

// MaxKeyLen is the longest key: InnoDB's index key limit with the default
// 16 KiB page and the DYNAMIC row format. Longer keys are refused by Set,
// never truncated (a non-strict sql_mode would truncate them silently).
const MaxKeyLen = 3072

// DefaultConnectTimeout bounds connecting (dial and handshake) when the URL
// sets no ?timeout=.
const DefaultConnectTimeout = 5 * time.Second

// Config configures a MariaDB / MySQL store.
type Config struct {
	// URL is mysql://user:password@host:port/db or mariadb://...; query
	// parameters are go-sql-driver DSN parameters (tls, timeout, ...). db is
	// the database connected to for administration; it must exist, or be
	// empty.
	URL string
	// Namespace is the database this store creates and owns.
	Namespace string
	// Design is DesignInnoDB (default when "").
	Design string
}

// Validate checks the config without connecting.
func (c Config) Validate() error {
	return store.CheckServerConfig("mysql", c.URL, CheckURL, checkDesign(c.Design), c.Namespace)
}

func checkDesign(design string) error {
	if design != "" && design != DesignInnoDB {
		return fmt.Errorf("mysql: unknown design %q (have %s)", design, DesignInnoDB)
	}
	return nil
}

// CheckURL parses a URL as New will, without connecting, the driver's DSN
// parameters included (tls, timeout, ...), so a bad one is found before any
// work. Its errors quote no part of raw.
func CheckURL(raw string) error {
	_, _, err := parseURL(raw)
	return err
}

func (c Config) design() string {
	if c.Design == "" {
		return DesignInnoDB
	}
	return c.Design
}

// parseURL turns a mysql:// or mariadb:// URL into a driver config and the
// redacted location. Errors quote no part of raw.
func parseURL(raw string) (*mysql.Config, string, error) {
	u, err := store.ParseURL(raw)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, "", errors.New("want scheme mysql:// or mariadb://")
	}
	// Parameters go through the driver's own DSN parser, without user and
	// password, so its errors cannot echo the password either.
	cfg, err := mysql.ParseDSN("/?" + u.RawQuery)
	if err != nil {
		return nil, "", errors.New(store.RedactText(err.Error(), raw))
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3306"
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	db := strings.TrimPrefix(u.Path, "/")
	if strings.Contains(db, "/") {
		return nil, "", errors.New("the database name holds a '/'")
	}
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", net.JoinHostPort(host, port), db
	cfg.InterpolateParams = false // server-side prepared statements, but for per-request clients (OpenPerRequest)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConnectTimeout
	}
	cfg.Logger = &mysql.NopLogger{} // every driver error is returned, classified and counted
	if cfg.ConnectionAttributes == "" {
		cfg.ConnectionAttributes = "program_name:storebench"
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// UNIX_TIMESTAMP(NOW(3)) is exact only in a zone without DST folds.
	cfg.Params["time_zone"] = "'+00:00'"
	loc := (&url.URL{Scheme: u.Scheme, User: url.User(cfg.User), Host: cfg.Addr, Path: "/" + db})
	if cfg.User == "" {
		loc.User = nil
	}
	return cfg, loc.String(), nil
}

// nowMS is the server's clock in milliseconds since the epoch.
const nowMS = `CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)`

// Store is one database in one MariaDB or MySQL server.
type Store struct {
	cfg    Config
	client *mysql.Config // clients connect to the namespace database
	loc    string        // redacted location
	db     string        // quoted identifier of the namespace database
	ddl    string
	getSQL string
	setSQL string
	delSQL string

	mu      sync.Mutex // guards closed and records, and makes check-then-drop one step
	admin   *sql.DB    // at most one connection
	closed  bool
	records *store.RecordsSQL    // the records' statements (records.go), once set up
	ns      store.OwnedNamespace // Reset, Close, Detach and DropNamespace of the database
}

var _ store.Store = (*Store)(nil)

// New connects, and creates the namespace database with its marker and
// table. A leftover database of the same name is dropped and recreated if it
// carries the marker, and refused with store.ErrNotOwned if not.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s, err := adminStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	table := s.db + ".kv"
	s.ddl = `CREATE TABLE ` + table + ` (k VARBINARY(` + strconv.Itoa(MaxKeyLen) + `) NOT NULL PRIMARY KEY, v LONGBLOB NOT NULL, expires_at BIGINT NULL) ENGINE=InnoDB`
	s.getSQL = `SELECT v FROM ` + table + ` WHERE k = ? AND (expires_at IS NULL OR expires_at > ` + nowMS + `)`
	// VALUES() in ON DUPLICATE KEY UPDATE: MariaDB has no row alias, MySQL
	// 8.0.20+ accepts it with a deprecation note.
	s.setSQL = `INSERT INTO ` + table + ` (k, v, expires_at) VALUES (?, ?, ` + nowMS + ` + ?)
		ON DUPLICATE KEY UPDATE v = VALUES(v), expires_at = VALUES(expires_at)`
	s.delSQL = `DELETE FROM ` + table + ` WHERE k = ?`
	if err := s.create(ctx); err != nil {
		s.admin.Close()
		return nil, err
	}
	return s, nil
}

// adminStore validates cfg and connects the store's administrative
// connection, creating nothing: New's first step, and the whole of it for
// work on a namespace outside a run (Namespaces, DropNamespace).
func adminStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	adminCfg, loc, _ := parseURL(cfg.URL) // checked by Validate
	s := &Store{cfg: cfg, loc: loc, db: "`" + cfg.Namespace + "`"}
	s.client = adminCfg.Clone()
	s.client.DBName = cfg.Namespace
	s.ns = store.OwnedNamespace{
		Kind: "mysql", Noun: "database", Quoted: s.db, Marker: fmt.Sprintf("table %s holding %q", OwnerTable, Marker),
		ResetSQL: `TRUNCATE TABLE ` + s.db + `.kv`, DropAll: s.dropDatabase,
		Mu: &s.mu, Closed: &s.closed, ErrClosed: errClosed,
		Owned: s.owned,
		Exec: func(ctx context.Context, q string) error {
			_, err := s.admin.ExecContext(ctx, q)
			return err
		},
		Disconnect: func(context.Context) error { return s.admin.Close() },
		OpErr:      opErr,
	}
	if err := s.openAdmin(ctx, adminCfg); err != nil {
		return nil, err
	}
	return s, nil
}

// openAdmin opens the administrative pool of one connection and checks
// that the server answers.
func (s *Store) openAdmin(ctx context.Context, adminCfg *mysql.Config) error {
	adminConn, err := mysql.NewConnector(adminCfg)
	if err != nil {
		return fmt.Errorf("mysql: %s: %v", s.loc, store.RedactText(err.Error(), s.cfg.URL))
	}
	s.admin = sql.OpenDB(adminConn)
	s.admin.SetMaxOpenConns(1)
	s.admin.SetMaxIdleConns(1)
	s.admin.SetConnMaxIdleTime(time.Hour) // below the server's wait_timeout (8 h by default)
	cctx, cancel := context.WithTimeout(ctx, adminCfg.Timeout)
	err = s.admin.PingContext(cctx)
	cancel()
	if err != nil {
		s.admin.Close()
		return s.connectErr(err)
	}
	return nil
}

func (s *Store) connectErr(err error) error {
	return errclass.WithClass(errclass.ClassUnavailable,
		fmt.Errorf("mysql: connect %s: %s", s.client.Addr, store.RedactText(err.Error(), s.cfg.URL)))
}

// owned reports whether the namespace database exists and whether it
// carries the marker.
func (s *Store) owned(ctx context.Context) (exists, owned bool, err error) {
	return ownedDB(ctx, s.admin, s.cfg.Namespace)
}

// ownedDB reports whether database ns (a valid namespace) exists on admin's
// server and whether it carries the marker.
func ownedDB(ctx context.Context, admin *sql.DB, ns string) (exists, owned bool, err error) {
	quoted := `'` + ns + `'` // validated: [a-z0-9_]
	var nDB, nTable int
	err = admin.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = `+quoted+`),
		(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = `+quoted+` AND TABLE_NAME = '`+OwnerTable+`')`).Scan(&nDB, &nTable)
	if err != nil {
		return false, false, opErr("check database owner", err)
	}
	if nDB == 0 || nTable == 0 {
		return nDB > 0, false, nil
	}
	var n int
	err = admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+ns+"`."+OwnerTable+` WHERE owner = '`+Marker+`'`).Scan(&n)
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok && me.Number == erBadField {
		return true, false, nil // someone else's table of that name, without an owner column
	}
	if err != nil {
		return true, false, opErr("check database owner", err)
	}
	return true, n > 0, nil
}

func (s *Store) create(ctx context.Context) error {
	exists, owned, err := s.owned(ctx)
	if err != nil {
		return err
	}
	if exists && !owned {
		return fmt.Errorf("mysql: database %s exists without table %s holding %q: %w", s.db, OwnerTable, Marker, store.ErrNotOwned)
	}
	// DDL is not transactional: the marker comes right after the database,
	// in one statement with its row.
	stmts := []string{
		`CREATE DATABASE ` + s.db,
		`CREATE TABLE ` + s.db + `.` + OwnerTable + ` ENGINE=InnoDB AS SELECT CAST('` + Marker + `' AS CHAR(32)) AS owner, NOW() AS created_at`,
		s.ddl,
	}
	if exists { // ours, left over from an earlier run
		if err := s.dropDatabase(ctx); err != nil {
			return err
		}
	}
	for _, q := range stmts {
		if _, err := s.admin.ExecContext(ctx, q); err != nil {
			return opErr("create database", err)
		}
	}
	return nil
}

var errClosed = errors.New("mysql: store is closed")

// ClientIO says how the connection waits for the server (blockio.Mode*).
func (c *Client) ClientIO() string { return blockio.ModeOf(c.blocking) }

// Open connects a new client and prepares its statements on the server.
func (s *Store) Open(ctx context.Context) (store.Client, error) {
	cctx, cancel := context.WithTimeout(ctx, s.client.Timeout)
	defer cancel()
	c, err := s.open(cctx, blockio.Use(ctx), false)
	if err != nil {
		return nil, err
	}
	prep, ok := c.conn.(driver.ConnPrepareContext)
	if !ok {
		c.conn.Close()
		return nil, fmt.Errorf("mysql: driver connection %T cannot prepare with a context", c.conn)
	}
	for _, p := range []struct {
		stmt *statement
		name string
		q    string
	}{
		{&c.get, "get", s.getSQL},
		{&c.set, "set", s.setSQL},
		{&c.del, "delete", s.delSQL},
	} {
		st, err := prep.PrepareContext(cctx, p.q)
		var prepared *stmt
		if err == nil {
			prepared, err = asStmt(st)
		}
		if err != nil {
			c.Close()
			return nil, opErr("prepare "+p.name, err)
		}
		*p.stmt = prepared // not before: a nil *stmt in the interface would not be nil for Close
	}
	return c, nil
}

var _ store.PerRequestOpener = (*Store)(nil)

// OpenPerRequest connects a client for one operation
// (store.PerRequestOpener), which it sends as one text query with its
// arguments escaped into it by the driver (COM_QUERY, one round trip), as
// an application's query without server-side prepares does. Open's three
// prepares would cost a request three round trips more than its query.
func (s *Store) OpenPerRequest(ctx context.Context) (store.Client, error) {
	cctx, cancel := context.WithTimeout(ctx, s.client.Timeout)
	defer cancel()
	c, err := s.open(cctx, false, true)
	if err != nil {
		return nil, err
	}
	q, ok := c.conn.(queryer)
	if !ok {
		c.conn.Close()
		return nil, fmt.Errorf("mysql: driver connection %T cannot query with a context", c.conn)
	}
	c.get, c.set, c.del = &textQuery{q, s.getSQL}, &textQuery{q, s.setSQL}, &textQuery{q, s.delSQL}
	return c, nil
}

// open connects a client without statements; with interpolate, the driver
// escapes arguments into the query text.
func (s *Store) open(ctx context.Context, block, interpolate bool) (*Client, error) {
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	return s.connect(ctx, block, func(cfg *mysql.Config) { cfg.InterpolateParams = interpolate })
}

// connect connects a client, its reads blocking their OS thread with block;
// adjust changes the client's copy of the driver config.
func (s *Store) connect(ctx context.Context, block bool, adjust func(*mysql.Config)) (*Client, error) {
	c := &Client{fired: make(chan struct{}, 1), blocking: block}
	c.interrupt = func() {
		_ = c.nc.SetDeadline(longAgo) // fails the blocked read or write at once
		c.fired <- struct{}{}
	}
	// A connector per client, whose dialer keeps the net.Conn for interrupt.
	cfg := s.client.Clone()
	adjust(cfg)
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil && c.blocking {
			nc, err = blockio.Wrap(nc) // the handshake too: Wrap keeps deadlines working
		}
		c.nc = nc
		return nc, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, s.connectErr(err)
	}
	if c.conn, err = connector.Connect(ctx); err != nil {
		return nil, s.connectErr(err)
	}
	for i := range c.args {
		c.args[i].Ordinal = i + 1
	}
	return c, nil
}

// statement is a client's get, set or delete: prepared (stmt) or not
// (textQuery).
type statement interface {
	driver.StmtExecContext
	driver.StmtQueryContext
	Close() error
}

// queryer is what a driver connection offers to run text queries.
type queryer interface {
	driver.QueryerContext
	driver.ExecerContext
}

// textQuery is a statement sent as text each time, its arguments escaped
// into it by the driver (Config.InterpolateParams).
type textQuery struct {
	conn queryer
	q    string
}

func (t *textQuery) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return t.conn.ExecContext(ctx, t.q, args)
}

func (t *textQuery) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return t.conn.QueryContext(ctx, t.q, args)
}

func (t *textQuery) Close() error { return nil }

// stmt is what the driver's prepared statement offers beyond driver.Stmt.
type stmt struct {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

func asStmt(st driver.Stmt) (*stmt, error) {
	e, ok1 := st.(driver.StmtExecContext)
	q, ok2 := st.(driver.StmtQueryContext)
	if !ok1 || !ok2 {
		st.Close()
		return nil, fmt.Errorf("driver statement %T lacks ExecContext or QueryContext", st)
	}
	return &stmt{st, e, q}, nil
}

// settingNames are read back with SHOW GLOBAL VARIABLES for the result file.
// tx_isolation is the name before MariaDB 11.1 / MySQL 8.0, where
// transaction_isolation may be missing.
var settingNames = []string{
	"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "binlog_format",
	"innodb_buffer_pool_size", "innodb_doublewrite", "innodb_flush_method",
	"transaction_isolation", "tx_isolation", "version_comment", "max_allowed_packet",
}

// Info reads back the server version, the effective settings and the kv
// table's engine as information_schema records it.
func (s *Store) Info(ctx context.Context) (store.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.Info{}, errClosed
	}
	set := map[string]string{
		"design":    s.cfg.design(),
		"ddl":       s.ddl,
		"exec_mode": "server-side prepared statements, prepared once per connection (COM_STMT_PREPARE), run with COM_STMT_EXECUTE (binary protocol), autocommit",
		"client":    "go-sql-driver/mysql driver.Conn without database/sql, one connection per client, prepared statements, ctx watched with context.AfterFunc; a connection per op: its one query as text, arguments escaped by the driver (one round trip)",
		"session":   "time_zone='+00:00' (expires_at uses UNIX_TIMESTAMP(NOW(3)))",
	}
	var version string
	if err := s.admin.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return store.Info{}, opErr("info: version", err)
	}
	set["version"] = version
	rows, err := s.admin.QueryContext(ctx, `SHOW GLOBAL VARIABLES WHERE Variable_name IN ('`+strings.Join(settingNames, `', '`)+`')`)
	if err != nil {
		return store.Info{}, opErr("info: SHOW GLOBAL VARIABLES", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return store.Info{}, opErr("info: SHOW GLOBAL VARIABLES", err)
		}
		set[k] = v
	}
	if err := rows.Err(); err != nil {
		return store.Info{}, opErr("info: SHOW GLOBAL VARIABLES", err)
	}
	if _, ok := set["transaction_isolation"]; !ok && set["tx_isolation"] != "" {
		set["transaction_isolation"] = set["tx_isolation"]
	}
	var engine, rowFormat sql.NullString
	err = s.admin.QueryRowContext(ctx, `SELECT ENGINE, ROW_FORMAT FROM information_schema.TABLES WHERE TABLE_SCHEMA = '`+s.cfg.Namespace+`' AND TABLE_NAME = 'kv'`).Scan(&engine, &rowFormat)
	if err != nil {
		return store.Info{}, opErr("info: table engine", err)
	}
	set["table_engine"], set["table_row_format"] = engine.String, rowFormat.String
	return store.Info{
		Kind:       "mysql",
		Version:    version,
		Location:   s.loc,
		Settings:   set,
		Durability: durability(set),
		Namespace:  s.cfg.Namespace,
	}, nil
}

// durability says in words what a crash loses under the settings read back.
func durability(set map[string]string) string {
	var d string
	switch v := set["innodb_flush_log_at_trx_commit"]; v {
	case "1", "3": // 3 (MariaDB 10.8+) fsyncs at commit like 1
		d = "redo log fsync every commit"
	case "2":
		d = "redo log written every commit, fsync ~1/s: an OS crash may lose ~1 s"
	case "0":
		d = "redo log flushed ~1/s: a crash may lose ~1 s"
	default:
		d = "innodb_flush_log_at_trx_commit=" + v + ": unknown"
	}
	if set["log_bin"] == "ON" || set["log_bin"] == "1" {
		switch sb := set["sync_binlog"]; sb {
		case "1":
			d += "; binlog fsync every commit"
		case "0", "":
			d += "; binlog not fsynced by the server (OS decides)"
		default:
			d += "; binlog fsync every " + sb + " commits"
		}
	} else {
		d += "; binlog off"
	}
	if dw := set["innodb_doublewrite"]; dw == "OFF" || dw == "0" {
		d += "; doublewrite off: a torn page may corrupt data"
	}
	return d
}

// Reset empties the table, after checking the database's marker.
func (s *Store) Reset(ctx context.Context) error { return s.ns.Reset(ctx) }

// Close drops the database, only if it carries the marker, and disconnects.
// Closing twice is not an error.
func (s *Store) Close(ctx context.Context) error { return s.ns.Close(ctx) }

// Client is one connection with its prepared statements.
type Client struct {
	conn          driver.Conn
	nc            net.Conn // the driver's socket, for interrupt
	get, set, del statement
	args          [3]driver.NamedValue // reused: no allocation per call for the slice
	dest          [1]driver.Value

	interrupt func()        // run by context.AfterFunc when ctx ends mid-call
	fired     chan struct{} // interrupt has run
	stop      func() bool   // the current call's AfterFunc

	blocking bool // its socket blocks (blockio.Wrap)
}

var _ store.KV = (*Client)(nil)

// longAgo is a deadline in the past: it fails pending I/O at once.
var longAgo = time.Unix(1, 0)

// watch arranges for the end of ctx to interrupt the coming round trip.
//
// The driver would watch ctx itself (its QueryContext and ExecContext hand
// each cancellable context to a per-connection goroutine and take it back
// afterwards): two goroutine handoffs per operation that doubled the
// client's CPU time per Get in a benchmark with a cancellable context, as
// the load engine's is. Like pgx, this uses context.AfterFunc, which costs
// nothing until ctx ends, and sets a past deadline on the socket then; the
// driver gets context.Background() and does not watch. (A ?readTimeout= in
// the URL makes the driver set its own read deadline before each read, which
// can outlast an interrupt; the call then ends at that timeout.)
func (c *Client) watch(ctx context.Context) error {
	c.stop = nil
	if ctx.Done() == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.stop = context.AfterFunc(ctx, c.interrupt)
	return nil
}

// unwatch ends watch. If ctx ended meanwhile, a failed call reports ctx's
// error (the driver has closed the connection), and a call that finished
// anyway gets its socket's deadline cleared.
func (c *Client) unwatch(ctx context.Context, err error) error {
	if c.stop == nil || c.stop() {
		return err
	}
	<-c.fired
	_ = c.nc.SetDeadline(time.Time{})
	if err != nil {
		err = &interrupted{ctx: ctx.Err(), err: err}
	}
	return err
}

// interrupted is a call cut short by the end of its context; its class is
// the context's (a deadline is a timeout).
type interrupted struct{ ctx, err error }

func (e *interrupted) Error() string   { return e.ctx.Error() + " (" + e.err.Error() + ")" }
func (e *interrupted) Unwrap() []error { return []error{e.ctx, e.err} }

// Close closes the statements and the connection.
func (c *Client) Close() error {
	var err error
	for _, st := range []statement{c.get, c.set, c.del} {
		if st != nil {
			err = errors.Join(err, st.Close())
		}
	}
	err = errors.Join(err, c.conn.Close())
	if err != nil {
		return opErr("close client", err)
	}
	return nil
}

// Get appends the unexpired value of key to dst[:0].
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := c.watch(ctx); err != nil {
		return dst, false, opErr("get", err)
	}
	ok, err := c.get1(key, &dst)
	if err = c.unwatch(ctx, err); err != nil {
		return dst[:0], false, opErr("get", err)
	}
	return dst, ok, nil
}

func (c *Client) get1(key []byte, dst *[]byte) (bool, error) {
	c.args[0].Value = store.NonNil(key)
	rows, err := c.get.QueryContext(context.Background(), c.args[:1])
	c.args[0].Value = nil // keep no reference to the caller's key
	if err != nil {
		return false, err
	}
	return appendValue(rows, &c.dest, dst)
}

// appendValue appends the value of rows' one column of at most one row to
// *dst, a copy (the driver's slice points into its read buffer), through
// dest; ok says there was a row. It closes rows.
func appendValue(rows driver.Rows, dest *[1]driver.Value, dst *[]byte) (ok bool, err error) {
	switch err = rows.Next(dest[:]); err {
	case nil:
		switch v := dest[0].(type) {
		case []byte:
			*dst, ok = append(*dst, v...), true
		case string:
			*dst, ok = append(*dst, v...), true
		}
	case io.EOF:
		err = nil
	}
	dest[0] = nil
	if e := rows.Close(); err == nil {
		err = e
	}
	return ok, err
}

// errKeyTooLong is returned by Set for a key longer than MaxKeyLen.
var errKeyTooLong = errors.New("mysql: set: key longer than " + strconv.Itoa(MaxKeyLen) + " bytes")

// Set upserts key; ttl > 0 becomes expires_at = server now + ttl, in whole
// milliseconds (rounded up, so a tiny ttl does not mean "expired").
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	if len(key) > MaxKeyLen {
		return errKeyTooLong
	}
	c.args[0].Value, c.args[1].Value, c.args[2].Value = store.NonNil(key), store.NonNil(val), nil
	if ttl > 0 {
		c.args[2].Value = int64((ttl + time.Millisecond - 1) / time.Millisecond)
	}
	err := c.exec(ctx, c.set, c.args[:])
	c.args[0].Value, c.args[1].Value, c.args[2].Value = nil, nil, nil
	if err != nil {
		return opErr("set", err)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	c.args[0].Value = store.NonNil(key)
	err := c.exec(ctx, c.del, c.args[:1])
	c.args[0].Value = nil
	if err != nil {
		return opErr("delete", err)
	}
	return nil
}

func (c *Client) exec(ctx context.Context, st statement, args []driver.NamedValue) error {
	if err := c.watch(ctx); err != nil {
		return err
	}
	_, err := st.ExecContext(context.Background(), args)
	return c.unwatch(ctx, err)
}

func opErr(op string, err error) error { return store.NewOpError("mysql", op, err, classify(err)) }

// MySQL / MariaDB server error numbers that have a class.
const (
	erBadField                 = 1054 // unknown column
	erConCount                 = 1040 // too many connections
	erServerShutdown           = 1053
	erLockWaitTimeout          = 1205
	erLockDeadlock             = 1213
	erStatementTimeout         = 1969 // MariaDB max_statement_time
	erConnectionKilled         = 1927 // MariaDB
	erQueryTimeout             = 3024 // MySQL max_execution_time
	erClientInteractionTimeout = 4031 // MySQL 8.0.24+: idle connection closed
)

// classify maps server error numbers and dead connections to error
// classes; "" leaves the decision to errclass.Classify (context deadline,
// network timeout, connection refused or reset).
func classify(err error) errclass.Class {
	if ie, ok := errors.AsType[*interrupted](err); ok {
		return errclass.Classify(ie.ctx)
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch me.Number {
		case erLockDeadlock:
			return errclass.ClassConflict
		case erLockWaitTimeout, erStatementTimeout, erQueryTimeout:
			return errclass.ClassTimeout
		case erConCount, erServerShutdown, erConnectionKilled, erClientInteractionTimeout:
			return errclass.ClassUnavailable
		}
		return ""
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) {
		return errclass.ClassUnavailable
	}
	return ""
}

// driverInt reads an integer the driver returned: int64 or uint64 in the
// binary protocol, float64 from a DOUBLE, []byte or string in the text
// protocol. Text is read as an integer first, exact beyond 2^53 (an id, a
// balance), and else as a number with a fraction (a DECIMAL, such as a
// SUM), which is dropped.
func driverInt(v driver.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	case []byte:
		return textInt(string(x))
	case string:
		return textInt(x)
	}
	return 0
}

func textInt(s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	f, _ := strconv.ParseFloat(s, 64)
	return int64(f)
}
