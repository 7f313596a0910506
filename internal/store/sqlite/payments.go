package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/paycheck"
)

// Payments (workloads/payments.md).
//
// The seven tables are "<namespace>_<table>", each recorded in
// storebench_owned like the kv table; drop and setup refuse a table of that
// name that is not recorded there. SQLite cannot add a foreign key to an
// existing table, so the foreign keys are declared by CREATE TABLE and the
// load runs with PRAGMA foreign_keys off (SQLite's default); the indexes on
// the foreign-key columns come after the load, and worker connections turn
// foreign_keys on, so inserts are checked as on the servers.
//
// SQLite has no server-side routines: only client mode, with BEGIN
// IMMEDIATE (the write lock first, so two transactions never deadlock on a
// lock upgrade) and busy_timeout; a lock not obtained in time (SQLITE_BUSY)
// is retried like a deadlock. SQLite allows one writer at a time, so every
// isolation level asked for is in effect serializable.
//
// Durability is PRAGMA synchronous on each worker connection: FULL (strict;
// in WAL mode an fsync of the WAL at every commit) or NORMAL (relaxed; in WAL
// mode fsync at checkpoints only, a power loss may lose the last commits);
// the journal mode is the store's. A worker's connection returns to the
// store's pool with its previous synchronous setting and foreign_keys off.
//
// Transfer ids are SQLite rowids (INTEGER PRIMARY KEY without
// AUTOINCREMENT, whose sqlite_sequence table could never be dropped, so the
// store could not remove a database file it created): the id of the newest
// transfer is reused if that transfer is deleted, so the delete journal may
// hold an id twice. There is no ANALYZE either (sqlite_stat1 would stay
// behind); every statement is a lookup by primary key or index.
//
// created_at is INTEGER Unix microseconds from SQLite's clock
// (unixepoch('subsec'), millisecond resolution); dates and token expiry
// are ISO-8601 text in UTC, compared with date('now') and
// strftime('%Y-%m-%d %H:%M:%f', 'now').

var _ store.Payments = (*Store)(nil)
var _ store.PaymentsModer = (*Store)(nil)

// PaymentsModes is client mode alone: SQLite has no server-side functions
// or procedures.
func (*Store) PaymentsModes() []string { return []string{store.PaymentsClient} }

// paymentsDDL creates the tables; "@" is replaced by the namespace.
var paymentsDDL = []string{
	`CREATE TABLE "@_organizations" (id INTEGER PRIMARY KEY)`,
	`CREATE TABLE "@_users" (id INTEGER PRIMARY KEY, organization_id INTEGER NOT NULL REFERENCES "@_organizations" (id), frozen INTEGER NOT NULL)`,
	`CREATE TABLE "@_permissions" (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`,
	`CREATE TABLE "@_accounts" (id INTEGER PRIMARY KEY, organization_id INTEGER NOT NULL REFERENCES "@_organizations" (id),
		balance INTEGER NOT NULL CONSTRAINT balance_not_negative CHECK (balance >= 0), frozen INTEGER NOT NULL)`,
	`CREATE TABLE "@_cards" (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES "@_accounts" (id),
		expiration_date TEXT NOT NULL, security_code INTEGER NOT NULL, frozen INTEGER NOT NULL)`,
	`CREATE TABLE "@_tokens" (hash BLOB NOT NULL, permission_id INTEGER NOT NULL REFERENCES "@_permissions" (id),
		user_id INTEGER NOT NULL REFERENCES "@_users" (id), expires_at TEXT NOT NULL, PRIMARY KEY (hash, permission_id)) WITHOUT ROWID`,
	`CREATE TABLE "@_transfers" (id INTEGER PRIMARY KEY, card_id INTEGER NOT NULL REFERENCES "@_cards" (id),
		from_account_id INTEGER NOT NULL REFERENCES "@_accounts" (id), to_account_id INTEGER NOT NULL REFERENCES "@_accounts" (id),
		requesting_user_id INTEGER NOT NULL REFERENCES "@_users" (id), amount INTEGER NOT NULL, created_at INTEGER NOT NULL)`,
}

const nowUs = `CAST(unixepoch('subsec') * 1000 AS INTEGER) * 1000`

const (
	sTokenSQL = `SELECT u.id, u.organization_id, u.frozen, t.expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
	FROM "@_tokens" t JOIN "@_permissions" p ON p.id = t.permission_id JOIN "@_users" u ON u.id = t.user_id
	WHERE t.hash = ? AND p.name = ?`
	sCardSQL = `SELECT c.account_id, a.organization_id, a.balance, c.security_code, c.frozen,
	c.expiration_date < date('now'), a.frozen
	FROM "@_cards" c JOIN "@_accounts" a ON a.id = c.account_id WHERE c.id = ?`
	sUpdateSQL = `UPDATE "@_accounts" SET balance = balance + ? WHERE id = ?`
	sInsertSQL = `INSERT INTO "@_transfers" (card_id, from_account_id, to_account_id, requesting_user_id, amount, created_at)
	VALUES (?, ?, ?, ?, ?, ` + nowUs + `) RETURNING id, created_at`
	sDeleteSQL = `DELETE FROM "@_transfers" WHERE id = (SELECT id FROM "@_transfers" WHERE id >= ? ORDER BY id LIMIT 1)
	RETURNING id, from_account_id, to_account_id, amount, created_at`
)

func (s *Store) psql(q string) string { return strings.ReplaceAll(q, "@", s.cfg.Namespace) }

func (s *Store) checkPaymentsConfig(cfg store.PaymentsConfig) error {
	switch cfg.Mode {
	case store.PaymentsClient:
	case store.PaymentsRoutine:
		return fmt.Errorf("sqlite: payments mode routine: SQLite has no server-side functions or procedures (use client): %w", store.ErrUnsupported)
	default:
		return fmt.Errorf("sqlite: payments mode %q: want %s", cfg.Mode, store.PaymentsClient)
	}
	switch cfg.Durability {
	case store.PaymentsStrict, store.PaymentsRelaxed:
	default:
		return fmt.Errorf("sqlite: payments durability %q: want %s or %s", cfg.Durability, store.PaymentsStrict, store.PaymentsRelaxed)
	}
	switch cfg.Isolation {
	case "", "read-committed", "repeatable-read", "serializable":
	default:
		return fmt.Errorf("sqlite: payments isolation %q: want read-committed, repeatable-read or serializable (or empty for the default)", cfg.Isolation)
	}
	if j := s.cfg.JournalMode; cfg.Durability == store.PaymentsStrict && (j == "OFF" || j == "MEMORY") {
		return fmt.Errorf("sqlite: payments durability strict is impossible with journal_mode=%s", j)
	}
	return nil
}

func synchronousFor(durability string) string {
	if durability == store.PaymentsRelaxed {
		return "NORMAL"
	}
	return "FULL"
}

// PaymentsPrepare says how the durability level maps to PRAGMA synchronous.
func (s *Store) PaymentsPrepare(ctx context.Context, cfg store.PaymentsConfig) (store.PaymentsSettings, error) {
	if err := s.checkPaymentsConfig(cfg); err != nil {
		return store.PaymentsSettings{}, err
	}
	if store.Ended(&s.mu, &s.closed) {
		return store.PaymentsSettings{}, errClosed
	}
	var journal string
	if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil {
		return store.PaymentsSettings{}, fmt.Errorf("sqlite: payments: PRAGMA journal_mode: %w", err)
	}
	journal = strings.ToUpper(journal)
	sync := synchronousFor(cfg.Durability)
	return store.PaymentsSettings{
		Knobs: map[string]string{"journal_mode": journal, "synchronous": sync + " (set per connection)",
			"busy_timeout": s.cfg.BusyTimeout.String(), "foreign_keys": "ON (set per connection)"},
		Durability: Durability(journal, sync),
		Isolation:  "serializable (one writer at a time; BEGIN IMMEDIATE)",
		ExecMode:   "github.com/mattn/go-sqlite3 through database/sql, in process: statements prepared once per pinned connection",
	}, nil
}

// paymentsOwned checks, inside tx, that none of the payments tables exists
// without being recorded in storebench_owned.
func (s *Store) paymentsOwned(ctx context.Context, tx *sql.Tx, op string) error {
	if store.Ended(&s.mu, &s.closed) {
		return errClosed
	}
	for _, t := range paycheck.Tables {
		name := s.cfg.Namespace + "_" + t
		exists, owned, err := tableState(ctx, tx, name)
		if err != nil {
			return fmt.Errorf("sqlite: %s: ownership of %s: %w", op, name, err)
		}
		if exists && !owned {
			return fmt.Errorf("sqlite: %s: table %q is not recorded in storebench_owned: %w", op, name, store.ErrNotOwned)
		}
	}
	return nil
}

func (s *Store) dropPayments(ctx context.Context, tx *sql.Tx) error {
	for _, t := range paycheck.Tables {
		name := s.cfg.Namespace + "_" + t
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS "`+name+`"`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM storebench_owned WHERE name = ?`, name); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err
		}
	}
	return nil
}

// PaymentsDrop drops the payments tables and their ownership rows.
func (s *Store) PaymentsDrop(ctx context.Context) error {
	return inTx(ctx, s.db, "payments drop", func(tx *sql.Tx) error {
		if err := s.paymentsOwned(ctx, tx, "payments drop"); err != nil {
			return err
		}
		if err := s.dropPayments(ctx, tx); err != nil {
			return fmt.Errorf("sqlite: payments drop: %w", err)
		}
		return nil
	})
}

// PaymentsSetup creates, records and loads the tables in one transaction.
func (s *Store) PaymentsSetup(ctx context.Context, d *store.PaymentsData) (store.PaymentsSetupInfo, error) {
	fail := func(what string, err error) (store.PaymentsSetupInfo, error) {
		return store.PaymentsSetupInfo{}, fmt.Errorf("sqlite: payments setup: %s: %w", what, err)
	}
	tx, err := s.db.BeginTx(ctx, nil) // IMMEDIATE (the DSN's _txlock)
	if err != nil {
		return fail("begin", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, ownedTableDDL); err != nil {
		return fail("ownership table", err)
	}
	if err := s.paymentsOwned(ctx, tx, "payments setup"); err != nil {
		return store.PaymentsSetupInfo{}, err
	}
	if err := s.dropPayments(ctx, tx); err != nil {
		return fail("drop leftovers", err)
	}
	ddl, err := paycheck.SQLDB{DB: tx, Resolve: s.psql}.ExecAll(ctx, paymentsDDL)
	if err != nil {
		return fail("create tables", err)
	}
	for _, t := range paycheck.DataTables {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO storebench_owned (name, created_at) VALUES (?, datetime('now'))`, s.cfg.Namespace+"_"+t); err != nil {
			return fail("record ownership", err)
		}
	}
	if err := s.loadPayments(ctx, tx, d); err != nil {
		return store.PaymentsSetupInfo{}, err
	}
	for _, fk := range paycheck.ForeignKeys { // an index on every foreign-key column
		q := s.psql(fmt.Sprintf(`CREATE INDEX "@_%[1]s_%[2]s_idx" ON "@_%[1]s" (%[2]s)`, fk.Table, fk.Column))
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fail("create indexes", err)
		}
		ddl = append(ddl, q)
	}
	var info store.PaymentsSetupInfo
	if err := tx.QueryRowContext(ctx, `SELECT `+nowUs).Scan(&info.ServerNowUs); err != nil {
		return fail("read clock", err)
	}
	if err := tx.Commit(); err != nil {
		return fail("commit", err)
	}
	info.DDL = strings.Join(ddl, ";\n")
	return info, nil
}

const loadBatch = 500

// liteLiterals writes the payments data in SQLite's literals (booleans are
// integers, times ISO-8601 text in milliseconds).
var liteLiterals = paycheck.Literals{True: "1", False: "0", Timestamp: "2006-01-02 15:04:05.000"}

// loadPayments inserts the data as multi-row INSERTs of literals.
func (s *Store) loadPayments(ctx context.Context, tx *sql.Tx, d *store.PaymentsData) error {
	for _, t := range paycheck.LiteralTables(d, liteLiterals) {
		for q := range t.Inserts(`"`+s.cfg.Namespace+`_`+t.Name+`"`, loadBatch) {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: payments setup: load %s: %w", t.Name, err)
			}
		}
	}
	return nil
}

// PaymentsStats samples the database file's pages and the WAL's size.
func (s *Store) PaymentsStats(ctx context.Context) (map[string]float64, error) {
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	out := map[string]float64{}
	for _, p := range []string{"page_count", "freelist_count", "page_size"} {
		var v float64
		if err := s.db.QueryRowContext(ctx, `PRAGMA `+p).Scan(&v); err != nil {
			return nil, fmt.Errorf("sqlite: payments stats: PRAGMA %s: %w", p, err)
		}
		out[p] = v
	}
	if fi, err := os.Stat(s.cfg.Path + "-wal"); err == nil {
		out["wal_bytes"] = float64(fi.Size())
	}
	return out, nil
}

// PaymentsCheck loads the delete journal into a table of the namespace and
// reads back what the invariants need (paycheck.Check), in one
// transaction.
func (s *Store) PaymentsCheck(ctx context.Context, in *store.PaymentsCheckInput) (store.PaymentsFacts, error) {
	fail := func(what string, err error) (store.PaymentsFacts, error) {
		return store.PaymentsFacts{}, fmt.Errorf("sqlite: payments check: %s: %w", what, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail("begin", err)
	}
	defer tx.Rollback()
	if err := s.paymentsOwned(ctx, tx, "payments check"); err != nil {
		return store.PaymentsFacts{}, err
	}
	f, err := paycheck.Check(ctx, paycheck.SQLDB{DB: tx, Resolve: s.psql}, &liteCheck, in)
	if err != nil {
		return f, err
	}
	if err := tx.Commit(); err != nil {
		return fail("commit", err)
	}
	return f, nil
}

// liteCheck is SQLite's text for paycheck.Check.
var liteCheck = paycheck.Dialect{
	Clock: `SELECT ` + nowUs,
	CreateJournal: []string{`DROP TABLE IF EXISTS "@_delete_journal"`, `CREATE TABLE "@_delete_journal" (id INTEGER NOT NULL,
		from_account_id INTEGER NOT NULL, to_account_id INTEGER NOT NULL, amount INTEGER NOT NULL, created_us INTEGER NOT NULL)`,
		`INSERT OR REPLACE INTO storebench_owned (name, created_at) VALUES ('@_delete_journal', datetime('now'))`},
	InsertJournal: `INSERT INTO "@_delete_journal" (id, from_account_id, to_account_id, amount, created_us) VALUES `,
	JournalBatch:  loadBatch,
	Sums:          paycheck.Query{SQL: `SELECT count(*), coalesce(sum(balance), 0), coalesce(sum(balance < 0), 0) FROM "@_accounts"`},
	Negative: paycheck.Query{SQL: `SELECT id FROM "@_accounts" WHERE balance < 0 ORDER BY id LIMIT ?`,
		Args: []paycheck.Arg{paycheck.Limit}},
	Mismatched: paycheck.Query{SQL: `WITH moves AS (
			SELECT from_account_id AS id, -amount AS d FROM "@_transfers"
			UNION ALL SELECT to_account_id, amount FROM "@_transfers"
			UNION ALL SELECT from_account_id, -amount FROM "@_delete_journal"
			UNION ALL SELECT to_account_id, amount FROM "@_delete_journal"),
		net AS (SELECT id, sum(d) AS d FROM moves GROUP BY id),
		bad AS (SELECT a.id, a.balance, ?1 + coalesce(n.d, 0) AS expected FROM "@_accounts" a LEFT JOIN net n ON n.id = a.id
				WHERE a.balance <> ?1 + coalesce(n.d, 0)
			UNION ALL SELECT n.id, 0, ?1 + n.d FROM net n LEFT JOIN "@_accounts" a ON a.id = n.id WHERE a.id IS NULL)
		SELECT count(*) OVER (), id, balance, expected FROM bad ORDER BY id LIMIT ?2`,
		Args: []paycheck.Arg{paycheck.InitialBalance, paycheck.Limit}},
	Rows: paycheck.Query{SQL: `SELECT count(*) FROM "@_transfers"`},
	// The specification's strftime('%Y-%m-%d %H:%M', …), as Unix minutes.
	PerMinute: paycheck.Query{SQL: `SELECT CAST(unixepoch(strftime('%Y-%m-%d %H:%M', created_at / 1000000, 'unixepoch')) AS INTEGER) / 60 AS m, count(*)
		FROM "@_transfers" GROUP BY m ORDER BY m`},
	Malformed: paycheck.Query{SQL: `WITH p AS (SELECT t.id, CASE
			WHEN t.from_account_id = t.to_account_id THEN 'from = to'
			WHEN t.amount < ?1 OR t.amount > ?2 THEN 'amount ' || t.amount || ' outside [' || ?1 || ', ' || ?2 || ']'
			WHEN c.account_id IS NOT t.from_account_id THEN 'card ' || t.card_id || ' is not the from account''s'
			WHEN u.organization_id IS NULL OR u.organization_id IS NOT ta.organization_id THEN 'requesting user''s organization is not the to account''s'
			WHEN t.created_at < ?3 OR t.created_at > ?4 THEN 'created_at ' || t.created_at || ' µs outside the run'
			WHEN c.frozen THEN 'card frozen'
			WHEN c.expiration_date < date(t.created_at / 1000000, 'unixepoch') THEN 'card expired'
			WHEN fa.frozen THEN 'from account frozen'
			END AS problem
		FROM "@_transfers" t LEFT JOIN "@_cards" c ON c.id = t.card_id LEFT JOIN "@_users" u ON u.id = t.requesting_user_id
		LEFT JOIN "@_accounts" ta ON ta.id = t.to_account_id LEFT JOIN "@_accounts" fa ON fa.id = t.from_account_id)
		SELECT count(*) OVER (), id, problem FROM p WHERE problem IS NOT NULL ORDER BY id LIMIT ?5`,
		Args: []paycheck.Arg{paycheck.AmountMin, paycheck.AmountMax, paycheck.WindowStart, paycheck.WindowEnd, paycheck.Limit}},
	Err: opErr,
}

// PaymentsOpen pins a connection of the store's pool for one worker.
func (s *Store) PaymentsOpen(ctx context.Context, cfg store.PaymentsConfig) (store.PaymentsConn, error) {
	if err := s.checkPaymentsConfig(cfg); err != nil {
		return nil, err
	}
	conn, err := s.pin(ctx, "payments: open")
	if err != nil {
		return nil, err
	}
	pc := &paymentsConn{conn: conn, restore: s.cfg.Synchronous}
	fail := func(what string, err error) (store.PaymentsConn, error) {
		pc.Close()
		return nil, fmt.Errorf("sqlite: payments: %s: %w", what, err)
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = `+synchronousFor(cfg.Durability)+`; PRAGMA foreign_keys = ON`); err != nil {
		return fail("session", err)
	}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&pc.token, sTokenSQL}, {&pc.card, sCardSQL}, {&pc.update, sUpdateSQL}, {&pc.insert, sInsertSQL}, {&pc.del, sDeleteSQL},
		{&pc.begin, `BEGIN IMMEDIATE`}, {&pc.commit, `COMMIT`}, {&pc.rollback, `ROLLBACK`},
	} {
		if *p.st, err = conn.PrepareContext(ctx, s.psql(p.q)); err != nil {
			return fail("prepare", err)
		}
	}
	return pc, nil
}

// paymentsConn is one pinned connection with its prepared statements.
type paymentsConn struct {
	conn    *sql.Conn
	restore string // the store's synchronous setting
	token, card, update, insert, del,
	begin, commit, rollback *sql.Stmt
	cols [7]int64
}

func (pc *paymentsConn) Close() error {
	for _, st := range []*sql.Stmt{pc.token, pc.card, pc.update, pc.insert, pc.del, pc.begin, pc.commit, pc.rollback} {
		if st != nil {
			st.Close()
		}
	}
	// Back to the pool as it came out of it.
	_, err := pc.conn.ExecContext(context.Background(), `PRAGMA synchronous = `+pc.restore+`; PRAGMA foreign_keys = OFF`)
	if cerr := pc.conn.Close(); err == nil && !errors.Is(cerr, sql.ErrConnDone) {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sqlite: payments: close: %w", err)
	}
	return nil
}

// payErr classifies a payments error: SQLITE_BUSY (busy_timeout passed
// without the lock) is retried like a deadlock.
func payErr(op string, err error) error {
	if se, ok := errors.AsType[sqlite3.Error](err); ok && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
		return store.NewOpError("sqlite", op, err, errclass.ClassConflict)
	}
	return opErr(op, err)
}

// row runs st with args and scans its only row into pc.cols[:n].
// roundTrip is a one-statement round trip op (RT1-RT3, a delete): row's
// on ctx made synchronous, its errors op's.
func (pc *paymentsConn) roundTrip(ctx context.Context, op string, st *sql.Stmt, n int, args ...any) (bool, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return false, opErr(op, err)
	}
	ok, err := pc.row(ctx, st, n, args...)
	if err != nil {
		return false, payErr(op, err)
	}
	return ok, nil
}

func (pc *paymentsConn) row(ctx context.Context, st *sql.Stmt, n int, args ...any) (bool, error) {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return false, err
	}
	ok := rows.Next()
	if ok {
		var dst [7]any
		for i := range n {
			dst[i] = &pc.cols[i]
		}
		if err := rows.Scan(dst[:n]...); err != nil {
			rows.Close()
			return false, err
		}
	}
	if err := rows.Close(); err != nil {
		return false, err
	}
	return ok, rows.Err()
}

// Token is RT1/RT3.
func (pc *paymentsConn) Token(ctx context.Context, hash *[16]byte, permission string, out *store.PaymentsTokenRow) (bool, error) {
	// The name is bound as a string (TEXT): a BLOB never equals permissions.name.
	ok, err := pc.roundTrip(ctx, "payments: token", pc.token, 4, hash[:], permission)
	if ok {
		c := &pc.cols
		*out = store.PaymentsTokenRow{UserID: c[0], OrgID: c[1], UserFrozen: c[2] != 0, Expired: c[3] != 0}
	}
	return ok, err // ok is false on an error
}

// Card is RT2.
func (pc *paymentsConn) Card(ctx context.Context, id int64, out *store.PaymentsCardRow) (bool, error) {
	ok, err := pc.roundTrip(ctx, "payments: card", pc.card, 7, id)
	if ok {
		c := &pc.cols
		*out = store.PaymentsCardRow{AccountID: c[0], AccountOrgID: c[1], Balance: c[2], CVV: int16(c[3]),
			CardFrozen: c[4] != 0, CardExpired: c[5] != 0, AccountFrozen: c[6] != 0}
	}
	return ok, err // ok is false on an error
}

// Transfer is RT4: BEGIN IMMEDIATE, two UPDATEs, INSERT … RETURNING, COMMIT.
func (pc *paymentsConn) Transfer(ctx context.Context, t *store.PaymentsTransfer) error {
	t.ID, t.CreatedUs, t.Insufficient = 0, 0, false
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("payments: transfer", err)
	}
	if _, err := pc.begin.ExecContext(ctx); err != nil {
		return payErr("payments: transfer: begin", err)
	}
	if err = pc.steps(ctx, t); err == nil {
		if _, err = pc.commit.ExecContext(ctx); err == nil {
			return nil
		}
	}
	_, _ = pc.rollback.ExecContext(context.Background())
	t.ID, t.CreatedUs = 0, 0
	if se, ok := errors.AsType[sqlite3.Error](err); ok && se.ExtendedCode == sqlite3.ErrConstraintCheck {
		t.Insufficient = true
		return nil
	}
	return payErr("payments: transfer", err)
}

func (pc *paymentsConn) steps(ctx context.Context, t *store.PaymentsTransfer) error {
	for _, u := range t.Updates() {
		res, err := pc.update.ExecContext(ctx, u.Delta, u.Account)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("transfer: account %d updated %d rows, want 1 (%v)", u.Account, n, err)
		}
	}
	ok, err := pc.row(ctx, pc.insert, 2, t.Card, t.From, t.To, t.User, t.Amount)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("transfer: INSERT … RETURNING returned no row")
	}
	t.ID, t.CreatedUs = pc.cols[0], pc.cols[1]
	return nil
}

// DeleteTransfer deletes the first transfer at or after fromID.
func (pc *paymentsConn) DeleteTransfer(ctx context.Context, fromID int64, out *store.PaymentsDeleted) (bool, error) {
	ok, err := pc.roundTrip(ctx, "payments: delete", pc.del, 5, fromID)
	if ok {
		c := &pc.cols
		*out = store.PaymentsDeleted{ID: c[0], From: c[1], To: c[2], Amount: c[3], CreatedUs: c[4]}
	}
	return ok, err // ok is false on an error
}
