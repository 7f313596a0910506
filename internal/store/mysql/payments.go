package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/paycheck"
)

// Payments (workloads/payments.md).
//
// The seven tables live in the namespace database, InnoDB. They are created
// without foreign keys, loaded with multi-row INSERTs, then given an index
// on every foreign-key column and the foreign keys (added with
// foreign_key_checks=0, so InnoDB adds them in place without re-reading the
// rows it has just loaded; the data is consistent by construction). RT4 is
// either the procedure transfer_funds (routine mode: one CALL, START
// TRANSACTION … COMMIT inside, an exit handler that rolls back and
// re-signals the error, so a deadlock reaches the client as 1213) or START
// TRANSACTION, two UPDATEs, an INSERT and COMMIT sent one by one (client
// mode). Worker connections set CLIENT_FOUND_ROWS, so an UPDATE reports the
// rows it matched (ROW_COUNT() too), and an amount of 0 still counts as
// one updated row.
//
// Durability: innodb_flush_log_at_trx_commit and sync_binlog are global
// settings of the server. This store never changes them (SET GLOBAL would
// outlive the run and change the server for everyone else on it); it reads
// them and refuses a durability level the server does not provide: strict
// needs innodb_flush_log_at_trx_commit=1 (or 3) and, with the binary log on,
// sync_binlog=1; relaxed needs innodb_flush_log_at_trx_commit=0 or 2 and no
// per-commit binlog fsync. For a managed MariaDB the profile decides:
// mariadb (default) is strict, mariadb:relaxed is relaxed.
//
// MySQL has no INSERT/DELETE … RETURNING: there the new id comes from
// LAST_INSERT_ID() and a delete is SELECT … FOR UPDATE then DELETE, as the
// specification says (one more round trip each).

var _ store.Payments = (*Store)(nil)

// MySQL / MariaDB error numbers of the payments.
const (
	erConstraintFailed        = 4025 // MariaDB: CHECK constraint failed
	erCheckConstraintViolated = 3819 // MySQL 8.0.16+
)

// paymentsDDL creates the tables; "@." is replaced by the database.
var paymentsDDL = []string{
	`CREATE TABLE @.organizations (id BIGINT NOT NULL PRIMARY KEY) ENGINE=InnoDB`,
	`CREATE TABLE @.users (id BIGINT NOT NULL PRIMARY KEY, organization_id BIGINT NOT NULL, frozen BOOLEAN NOT NULL) ENGINE=InnoDB`,
	`CREATE TABLE @.permissions (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE) ENGINE=InnoDB`,
	`CREATE TABLE @.accounts (id BIGINT NOT NULL PRIMARY KEY, organization_id BIGINT NOT NULL, balance BIGINT NOT NULL,
		frozen BOOLEAN NOT NULL, CONSTRAINT balance_not_negative CHECK (balance >= 0)) ENGINE=InnoDB`,
	`CREATE TABLE @.cards (id BIGINT NOT NULL PRIMARY KEY, account_id BIGINT NOT NULL, expiration_date DATE NOT NULL,
		security_code SMALLINT NOT NULL, frozen BOOLEAN NOT NULL) ENGINE=InnoDB`,
	`CREATE TABLE @.tokens (hash BINARY(16) NOT NULL, permission_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
		expires_at DATETIME(6) NOT NULL, PRIMARY KEY (hash, permission_id)) ENGINE=InnoDB`,
	`CREATE TABLE @.transfers (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, card_id BIGINT NOT NULL,
		from_account_id BIGINT NOT NULL, to_account_id BIGINT NOT NULL, requesting_user_id BIGINT NOT NULL,
		amount BIGINT NOT NULL, created_at DATETIME(6) NOT NULL) ENGINE=InnoDB`,
}

// createdUs is created_at in Unix microseconds (the session is in UTC).
const createdUs = `CAST(UNIX_TIMESTAMP(created_at) * 1000000 AS SIGNED)`

// paymentsRoutine is RT4 in routine mode.
const paymentsRoutine = `CREATE PROCEDURE @.transfer_funds(IN p_card BIGINT, IN p_from BIGINT, IN p_to BIGINT, IN p_user BIGINT, IN p_amount BIGINT,
	IN p_payer_first BOOLEAN)
BEGIN
	DECLARE v_id BIGINT;
	DECLARE v_now DATETIME(6);
	DECLARE v_first BIGINT DEFAULT IF(p_payer_first, p_from, LEAST(p_from, p_to));
	DECLARE v_second BIGINT DEFAULT IF(p_payer_first, p_to, GREATEST(p_from, p_to));
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	START TRANSACTION;
	UPDATE @.accounts SET balance = balance + IF(id = p_from, -p_amount, p_amount) WHERE id = v_first;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'transfer_funds: the first account was not updated';
	END IF;
	UPDATE @.accounts SET balance = balance + IF(id = p_from, -p_amount, p_amount) WHERE id = v_second;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'transfer_funds: the second account was not updated';
	END IF;
	SET v_now = NOW(6);
	INSERT INTO @.transfers (card_id, from_account_id, to_account_id, requesting_user_id, amount, created_at)
		VALUES (p_card, p_from, p_to, p_user, p_amount, v_now);
	SET v_id = LAST_INSERT_ID();
	COMMIT;
	SELECT v_id, CAST(UNIX_TIMESTAMP(v_now) * 1000000 AS SIGNED);
END`

const (
	mTokenSQL = `SELECT u.id, u.organization_id, u.frozen, t.expires_at <= NOW(6)
	FROM tokens t JOIN permissions p ON p.id = t.permission_id JOIN users u ON u.id = t.user_id
	WHERE t.hash = ? AND p.name = ?`
	mCardSQL = `SELECT c.account_id, a.organization_id, a.balance, c.security_code, c.frozen,
	c.expiration_date < CURRENT_DATE(), a.frozen
	FROM cards c JOIN accounts a ON a.id = c.account_id WHERE c.id = ?`
	mCallSQL     = `CALL transfer_funds(?, ?, ?, ?, ?, ?)`
	mUpdateSQL   = `UPDATE accounts SET balance = balance + ? WHERE id = ?`
	mInsertCols  = `INSERT INTO transfers (card_id, from_account_id, to_account_id, requesting_user_id, amount, created_at) VALUES (?, ?, ?, ?, ?, NOW(6))`
	mReturning   = ` RETURNING id, ` + createdUs
	mLastSQL     = `SELECT id, ` + createdUs + ` FROM transfers WHERE id = LAST_INSERT_ID()`
	mDeleteCols  = `id, from_account_id, to_account_id, amount, ` + createdUs
	mDeleteSQL   = `DELETE FROM transfers WHERE id >= ? ORDER BY id LIMIT 1 RETURNING ` + mDeleteCols
	mFindSQL     = `SELECT ` + mDeleteCols + ` FROM transfers WHERE id >= ? ORDER BY id LIMIT 1 FOR UPDATE`
	mDeleteIDSQL = `DELETE FROM transfers WHERE id = ?`
)

var myIsolation = map[string]string{
	"read-committed":  "READ COMMITTED",
	"repeatable-read": "REPEATABLE READ",
	"serializable":    "SERIALIZABLE",
}

func (s *Store) sql(q string) string { return strings.ReplaceAll(q, "@.", s.db+".") }

// globals reads global variables; missing ones are absent from the map.
func (s *Store) globals(ctx context.Context, names ...string) (map[string]string, error) {
	rows, err := s.admin.QueryContext(ctx, `SHOW GLOBAL VARIABLES WHERE Variable_name IN ('`+strings.Join(names, `', '`)+`')`)
	if err != nil {
		return nil, opErr("payments: SHOW GLOBAL VARIABLES", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, opErr("payments: SHOW GLOBAL VARIABLES", err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, opErr("payments: SHOW GLOBAL VARIABLES", err)
	}
	return out, nil
}

func (s *Store) mariaDB(ctx context.Context) (bool, error) {
	var v string
	if err := s.admin.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&v); err != nil {
		return false, opErr("payments: version", err)
	}
	return strings.Contains(strings.ToLower(v), "mariadb"), nil
}

// PaymentsPrepare checks that the server's global durability settings are
// the level asked for; it does not change them.
func (s *Store) PaymentsPrepare(ctx context.Context, cfg store.PaymentsConfig) (store.PaymentsSettings, error) {
	if err := cfg.Check("mysql", myIsolation); err != nil {
		return store.PaymentsSettings{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.PaymentsSettings{}, errClosed
	}
	knobs, err := s.globals(ctx, "innodb_flush_log_at_trx_commit", "log_bin", "sync_binlog", "innodb_doublewrite",
		"innodb_flush_method", "transaction_isolation", "tx_isolation", "version")
	if err != nil {
		return store.PaymentsSettings{}, err
	}
	flush := knobs["innodb_flush_log_at_trx_commit"]
	binlog := knobs["log_bin"] == "ON" || knobs["log_bin"] == "1"
	binlogSync := binlog && knobs["sync_binlog"] == "1"
	switch cfg.Durability {
	case store.PaymentsStrict:
		if (flush != "1" && flush != "3") || (binlog && !binlogSync) {
			return store.PaymentsSettings{}, fmt.Errorf("mysql: payments durability strict needs innodb_flush_log_at_trx_commit=1 and, with log_bin on, sync_binlog=1; the server has innodb_flush_log_at_trx_commit=%s, log_bin=%s, sync_binlog=%s. storebench does not SET GLOBAL on a server: for a managed MariaDB use the default profile (mariadb), otherwise change the server's settings",
				flush, knobs["log_bin"], knobs["sync_binlog"])
		}
	case store.PaymentsRelaxed:
		if (flush != "0" && flush != "2") || binlogSync {
			return store.PaymentsSettings{}, fmt.Errorf("mysql: payments durability relaxed needs innodb_flush_log_at_trx_commit=2 (or 0) and no per-commit binlog fsync; the server has innodb_flush_log_at_trx_commit=%s, log_bin=%s, sync_binlog=%s. storebench does not SET GLOBAL on a server: for a managed MariaDB use profile mariadb:relaxed, otherwise change the server's settings",
				flush, knobs["log_bin"], knobs["sync_binlog"])
		}
	}
	iso := knobs["transaction_isolation"]
	if iso == "" {
		iso = knobs["tx_isolation"]
	}
	if cfg.Isolation != "" {
		iso = myIsolation[cfg.Isolation] + " (set per session)"
	}
	st := store.PaymentsSettings{
		Knobs:      knobs,
		Durability: durability(knobs) + " (global server settings, read back, not changed by storebench)",
		Isolation:  iso,
		ExecMode:   "server-side prepared statements, prepared once per connection (COM_STMT_PREPARE), run with COM_STMT_EXECUTE (binary protocol), no client-side interpolation; START TRANSACTION and COMMIT as text queries; CLIENT_FOUND_ROWS",
	}
	if cfg.Mode == store.PaymentsRoutine {
		st.Routine = s.sql(paymentsRoutine)
	}
	return st, nil
}

// setupDB is a one-connection pool on the namespace database, for setup
// and check, with its own session settings.
func (s *Store) setupDB(ctx context.Context) (*sql.DB, error) {
	cfg := s.client.Clone()
	cfg.ClientFoundRows = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, s.connectErr(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, s.connectErr(err)
	}
	return db, nil
}

// withPaymentsDB checks the database's marker under the store's lock, then
// runs use for op on a setupDB of its own, closed after it.
func withPaymentsDB[T any](ctx context.Context, s *Store, op string, use func(*sql.DB) (T, error)) (T, error) {
	var zero T
	if err := s.ns.Check(ctx, op); err != nil {
		return zero, err
	}
	db, err := s.setupDB(ctx)
	if err != nil {
		return zero, err
	}
	defer db.Close()
	return use(db)
}

func (s *Store) dropPayments(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `DROP PROCEDURE IF EXISTS `+s.db+`.transfer_funds`); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `SET SESSION foreign_key_checks = 0`); err != nil {
		return err
	}
	defer db.ExecContext(context.WithoutCancel(ctx), `SET SESSION foreign_key_checks = 1`)
	for _, t := range paycheck.Tables {
		if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS `+s.db+`.`+t); err != nil {
			return err
		}
	}
	return nil
}

// PaymentsDrop drops the payments tables and procedure.
func (s *Store) PaymentsDrop(ctx context.Context) error {
	_, err := withPaymentsDB(ctx, s, "payments drop", func(db *sql.DB) (struct{}, error) {
		if err := s.dropPayments(ctx, db); err != nil {
			return struct{}{}, opErr("payments drop", err)
		}
		return struct{}{}, nil
	})
	return err
}

// PaymentsSetup creates and loads the tables on a connection of its own.
func (s *Store) PaymentsSetup(ctx context.Context, d *store.PaymentsData) (store.PaymentsSetupInfo, error) {
	return withPaymentsDB(ctx, s, "payments setup", func(db *sql.DB) (store.PaymentsSetupInfo, error) {
		return s.setupPayments(ctx, db, d)
	})
}

// setupPayments is PaymentsSetup on its connection.
func (s *Store) setupPayments(ctx context.Context, db *sql.DB, d *store.PaymentsData) (store.PaymentsSetupInfo, error) {
	fail := func(what string, err error) (store.PaymentsSetupInfo, error) {
		return store.PaymentsSetupInfo{}, opErr("payments setup: "+what, err)
	}
	if err := s.dropPayments(ctx, db); err != nil {
		return fail("drop leftovers", err)
	}
	ddl, err := paycheck.SQLDB{DB: db, Resolve: s.sql}.ExecAll(ctx, paymentsDDL)
	if err != nil {
		return fail("create tables", err)
	}
	if err := s.loadPayments(ctx, db, d); err != nil {
		return store.PaymentsSetupInfo{}, err
	}
	alters := map[string][]string{}
	var order []string
	for _, fk := range paycheck.ForeignKeys {
		if _, ok := alters[fk.Table]; !ok {
			order = append(order, fk.Table)
		}
		alters[fk.Table] = append(alters[fk.Table], fmt.Sprintf("ADD INDEX %[1]s_%[2]s_idx (%[2]s)", fk.Table, fk.Column))
	}
	for _, fk := range paycheck.ForeignKeys {
		alters[fk.Table] = append(alters[fk.Table], fmt.Sprintf("ADD CONSTRAINT %[1]s_%[2]s_fk FOREIGN KEY (%[2]s) REFERENCES %[3]s (id)", fk.Table, fk.Column, fk.References))
	}
	if _, err := db.ExecContext(ctx, `SET SESSION foreign_key_checks = 0`); err != nil {
		return fail("foreign_key_checks", err)
	}
	for _, t := range order {
		q := `ALTER TABLE ` + s.db + `.` + t + ` ` + strings.Join(alters[t], ", ")
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fail("add foreign keys", err)
		}
		ddl = append(ddl, q)
	}
	if _, err := db.ExecContext(ctx, `SET SESSION foreign_key_checks = 1`); err != nil {
		return fail("foreign_key_checks", err)
	}
	if _, err := db.ExecContext(ctx, s.sql(paymentsRoutine)); err != nil {
		return fail("create procedure", err)
	}
	for _, t := range paycheck.DataTables {
		if _, err := db.ExecContext(ctx, `ANALYZE TABLE `+s.db+`.`+t); err != nil {
			return fail("analyze", err)
		}
	}
	info := store.PaymentsSetupInfo{DDL: strings.Join(ddl, ";\n")}
	if err := db.QueryRowContext(ctx, `SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)`).Scan(&info.ServerNowUs); err != nil {
		return fail("read clock", err)
	}
	return info, nil
}

// loadBatch is the number of rows per INSERT while loading.
const loadBatch = 1000

// myLiterals writes the payments data in MySQL's literals.
var myLiterals = paycheck.Literals{True: "TRUE", False: "FALSE", Timestamp: "2006-01-02 15:04:05.000000"}

// loadPayments inserts the data as multi-row INSERTs of literals, one
// transaction per table.
func (s *Store) loadPayments(ctx context.Context, db *sql.DB, d *store.PaymentsData) error {
	for _, t := range paycheck.LiteralTables(d, myLiterals) {
		if err := s.loadTable(ctx, db, t); err != nil {
			return opErr("payments setup: load "+t.Name, err)
		}
	}
	return nil
}

func (s *Store) loadTable(ctx context.Context, db *sql.DB, t paycheck.LiteralTable) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for q := range t.Inserts(s.db+"."+t.Name, loadBatch) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// PaymentsStats samples InnoDB's history list length, dirty pages and
// checkpoint age, and the sizes of accounts and transfers.
func (s *Store) PaymentsStats(ctx context.Context) (map[string]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	out := map[string]float64{}
	rows, err := s.admin.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_history_list_length',
		'Innodb_buffer_pool_pages_dirty', 'Innodb_checkpoint_age', 'Innodb_row_lock_waits', 'Innodb_deadlocks', 'Innodb_row_lock_current_waits')`)
	if err != nil {
		return nil, opErr("payments stats", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, opErr("payments stats", err)
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[strings.ToLower(k)] = f
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, opErr("payments stats", err)
	}
	if _, ok := out["innodb_history_list_length"]; !ok { // MySQL: from the metrics table
		var n sql.NullFloat64
		if err := s.admin.QueryRowContext(ctx, `SELECT MAX(COUNT) FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'`).Scan(&n); err == nil && n.Valid {
			out["innodb_history_list_length"] = n.Float64
		}
	}
	rows, err = s.admin.QueryContext(ctx, `SELECT TABLE_NAME, TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = '`+s.cfg.Namespace+`' AND TABLE_NAME IN ('accounts', 'transfers')`)
	if err != nil {
		return nil, opErr("payments stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n, size sql.NullFloat64
		if err := rows.Scan(&name, &n, &size); err != nil {
			return nil, opErr("payments stats", err)
		}
		out[name+".rows_estimate"], out[name+".size_bytes"] = n.Float64, size.Float64
	}
	if err := rows.Err(); err != nil {
		return nil, opErr("payments stats", err)
	}
	return out, nil
}

// PaymentsCheck loads the delete journal into a table of the namespace and
// reads back what the invariants need (paycheck.Check).
func (s *Store) PaymentsCheck(ctx context.Context, in *store.PaymentsCheckInput) (store.PaymentsFacts, error) {
	return withPaymentsDB(ctx, s, "payments check", func(db *sql.DB) (store.PaymentsFacts, error) {
		return paycheck.Check(ctx, paycheck.SQLDB{DB: db, Resolve: s.sql}, &myCheck, in)
	})
}

// myCheck is MySQL's and MariaDB's text for paycheck.Check.
var myCheck = paycheck.Dialect{
	Clock: `SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)`,
	CreateJournal: []string{`DROP TABLE IF EXISTS @.delete_journal`, `CREATE TABLE @.delete_journal (id BIGINT NOT NULL PRIMARY KEY,
		from_account_id BIGINT NOT NULL, to_account_id BIGINT NOT NULL, amount BIGINT NOT NULL, created_us BIGINT NOT NULL) ENGINE=InnoDB`},
	InsertJournal: `INSERT INTO @.delete_journal (id, from_account_id, to_account_id, amount, created_us) VALUES `,
	JournalBatch:  loadBatch,
	Sums:          paycheck.Query{SQL: `SELECT COUNT(*), COALESCE(SUM(balance), 0), COALESCE(SUM(balance < 0), 0) FROM @.accounts`},
	Negative: paycheck.Query{SQL: `SELECT id FROM @.accounts WHERE balance < 0 ORDER BY id LIMIT ?`,
		Args: []paycheck.Arg{paycheck.Limit}},
	// MariaDB 10.11 and MySQL 8 both have CTEs and window functions; no FULL
	// JOIN, so the accounts missing from net are taken by the LEFT JOIN and
	// the ids in net without an account by the UNION's second part.
	Mismatched: paycheck.Query{SQL: `WITH moves AS (
			SELECT from_account_id AS id, -amount AS d FROM @.transfers
			UNION ALL SELECT to_account_id, amount FROM @.transfers
			UNION ALL SELECT from_account_id, -amount FROM @.delete_journal
			UNION ALL SELECT to_account_id, amount FROM @.delete_journal),
		net AS (SELECT id, CAST(SUM(d) AS SIGNED) AS d FROM moves GROUP BY id),
		bad AS (SELECT a.id, a.balance, ? + COALESCE(n.d, 0) AS expected FROM @.accounts a LEFT JOIN net n ON n.id = a.id
				WHERE a.balance <> ? + COALESCE(n.d, 0)
			UNION ALL SELECT n.id, 0, ? + n.d FROM net n LEFT JOIN @.accounts a ON a.id = n.id WHERE a.id IS NULL)
		SELECT COUNT(*) OVER (), id, balance, expected FROM bad ORDER BY id LIMIT ?`,
		Args: []paycheck.Arg{paycheck.InitialBalance, paycheck.InitialBalance, paycheck.InitialBalance, paycheck.Limit}},
	Rows: paycheck.Query{SQL: `SELECT COUNT(*) FROM @.transfers`},
	// The specification's DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:00'), as
	// Unix minutes.
	PerMinute: paycheck.Query{SQL: `SELECT FLOOR(UNIX_TIMESTAMP(DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:00')) / 60) AS m, COUNT(*)
		FROM @.transfers GROUP BY m ORDER BY m`},
	Malformed: paycheck.Query{SQL: `WITH p AS (SELECT t.id, CASE
			WHEN t.from_account_id = t.to_account_id THEN 'from = to'
			WHEN t.amount < ? OR t.amount > ? THEN CONCAT('amount ', t.amount, ' outside [', ?, ', ', ?, ']')
			WHEN c.account_id IS NULL OR c.account_id <> t.from_account_id THEN CONCAT('card ', t.card_id, ' is not the from account''s')
			WHEN u.organization_id IS NULL OR ta.organization_id IS NULL OR u.organization_id <> ta.organization_id THEN 'requesting user''s organization is not the to account''s'
			WHEN ` + createdUsT + ` < ? OR ` + createdUsT + ` > ? THEN CONCAT('created_at ', t.created_at, ' outside the run')
			WHEN c.frozen THEN 'card frozen'
			WHEN c.expiration_date < DATE(t.created_at) THEN 'card expired'
			WHEN fa.frozen THEN 'from account frozen'
			END AS problem
		FROM @.transfers t LEFT JOIN @.cards c ON c.id = t.card_id LEFT JOIN @.users u ON u.id = t.requesting_user_id
		LEFT JOIN @.accounts ta ON ta.id = t.to_account_id LEFT JOIN @.accounts fa ON fa.id = t.from_account_id)
		SELECT COUNT(*) OVER (), id, problem FROM p WHERE problem IS NOT NULL ORDER BY id LIMIT ?`,
		Args: []paycheck.Arg{paycheck.AmountMin, paycheck.AmountMax, paycheck.AmountMin, paycheck.AmountMax,
			paycheck.WindowStart, paycheck.WindowEnd, paycheck.Limit}},
	Err: opErr,
}

const createdUsT = `CAST(UNIX_TIMESTAMP(t.created_at) * 1000000 AS SIGNED)`

// PaymentsOpen connects a worker (CLIENT_FOUND_ROWS), sets its session and
// prepares its statements.
func (s *Store) PaymentsOpen(ctx context.Context, cfg store.PaymentsConfig) (store.PaymentsConn, error) {
	if err := cfg.Check("mysql", myIsolation); err != nil {
		return nil, err
	}
	maria, err := func() (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return false, errClosed
		}
		return s.mariaDB(ctx)
	}()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.client.Timeout)
	defer cancel()
	c, err := s.connect(cctx, false, func(cfg *mysql.Config) { cfg.ClientFoundRows = true })
	if err != nil {
		return nil, err
	}
	pc := &paymentsConn{c: c, routine: cfg.Mode == store.PaymentsRoutine, maria: maria}
	fail := func(what string, err error) (store.PaymentsConn, error) {
		pc.Close()
		return nil, opErr("payments: "+what, err)
	}
	execer, ok := c.conn.(driver.ExecerContext)
	if !ok {
		return fail("session", fmt.Errorf("driver connection %T cannot execute text queries", c.conn))
	}
	if cfg.Isolation != "" {
		if _, err := execer.ExecContext(cctx, `SET SESSION TRANSACTION ISOLATION LEVEL `+myIsolation[cfg.Isolation], nil); err != nil {
			return fail("set isolation", err)
		}
	}
	prep, ok := c.conn.(driver.ConnPrepareContext)
	if !ok {
		return fail("prepare", fmt.Errorf("driver connection %T cannot prepare with a context", c.conn))
	}
	pc.begin, ok = c.conn.(driver.ConnBeginTx)
	if !ok {
		return fail("begin", fmt.Errorf("driver connection %T cannot begin with a context", c.conn))
	}
	insert, del := mInsertCols+mReturning, mDeleteSQL
	if !maria {
		insert, del = mInsertCols, mFindSQL
	}
	for _, p := range []struct {
		st **stmt
		q  string
	}{
		{&pc.token, mTokenSQL}, {&pc.card, mCardSQL}, {&pc.call, mCallSQL}, {&pc.update, mUpdateSQL},
		{&pc.insert, insert}, {&pc.del, del}, {&pc.last, mLastSQL}, {&pc.delID, mDeleteIDSQL},
	} {
		if p.st == &pc.last && maria || p.st == &pc.delID && maria {
			continue
		}
		st, err := prep.PrepareContext(cctx, p.q)
		if err == nil {
			*p.st, err = asStmt(st)
		}
		if err != nil {
			return fail("prepare "+p.q, err)
		}
	}
	for i := range pc.args {
		pc.args[i].Ordinal = i + 1
	}
	pc.perm[0], pc.perm[1] = []byte(store.PermTransferRequestsCreate), []byte(store.PermTransfersCreate)
	return pc, nil
}

// paymentsConn is one worker's connection with its prepared statements.
type paymentsConn struct {
	c              *Client
	routine, maria bool
	begin          driver.ConnBeginTx
	token, card, call, update, insert, del,
	last, delID *stmt // last, delID: MySQL only
	args [6]driver.NamedValue
	dest [7]driver.Value
	perm [2][]byte
}

func (pc *paymentsConn) Close() error {
	var err error
	for _, st := range []*stmt{pc.token, pc.card, pc.call, pc.update, pc.insert, pc.del, pc.last, pc.delID} {
		if st != nil {
			err = errors.Join(err, st.Close())
		}
	}
	if pc.c.conn != nil {
		err = errors.Join(err, pc.c.conn.Close())
	}
	if err != nil {
		return opErr("payments: close", err)
	}
	return nil
}

// payErr classifies a payments error: a lock wait timeout is retried like
// a deadlock (InnoDB rolled back the statement; the transaction is rolled
// back by the caller before it tries again).
func payErr(op string, err error) error {
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok && me.Number == erLockWaitTimeout {
		return store.NewOpError("mysql", op, err, errclass.ClassConflict)
	}
	return opErr(op, err)
}

func (pc *paymentsConn) clearArgs(n int) {
	for i := range pc.args[:n] {
		pc.args[i].Value = nil
	}
	for i := range pc.dest {
		pc.dest[i] = nil
	}
}

// queryRow runs st and scans its only row into pc.dest; ok is false when
// there is none. Every result set is read to its end.
func (pc *paymentsConn) queryRow(ctx context.Context, st *stmt, n, cols int) (bool, error) {
	if err := pc.c.watch(ctx); err != nil {
		return false, err
	}
	ok, err := pc.queryRow1(st, n, cols)
	return ok, pc.c.unwatch(ctx, err)
}

func (pc *paymentsConn) queryRow1(st *stmt, n, cols int) (bool, error) {
	rows, err := st.QueryContext(context.Background(), pc.args[:n])
	if err != nil {
		return false, err
	}
	if len(rows.Columns()) != cols {
		rows.Close()
		return false, fmt.Errorf("%d columns, want %d", len(rows.Columns()), cols)
	}
	ok := false
	switch err = rows.Next(pc.dest[:cols]); err {
	case nil:
		ok = true
	case io.EOF:
		err = nil
	}
	if e := rows.Close(); err == nil {
		err = e
	}
	return ok, err
}

// Token is RT1/RT3.
func (pc *paymentsConn) Token(ctx context.Context, hash *[16]byte, permission string, out *store.PaymentsTokenRow) (bool, error) {
	pc.args[0].Value = hash[:]
	switch permission {
	case store.PermTransferRequestsCreate:
		pc.args[1].Value = pc.perm[0]
	case store.PermTransfersCreate:
		pc.args[1].Value = pc.perm[1]
	default:
		pc.args[1].Value = permission
	}
	ok, err := pc.queryRow(ctx, pc.token, 2, 4)
	if ok {
		*out = store.PaymentsTokenRow{UserID: driverInt(pc.dest[0]), OrgID: driverInt(pc.dest[1]), UserFrozen: driverInt(pc.dest[2]) != 0, Expired: driverInt(pc.dest[3]) != 0}
	}
	pc.clearArgs(2)
	if err != nil {
		return false, payErr("payments: token", err)
	}
	return ok, nil
}

// Card is RT2.
func (pc *paymentsConn) Card(ctx context.Context, id int64, out *store.PaymentsCardRow) (bool, error) {
	pc.args[0].Value = id
	ok, err := pc.queryRow(ctx, pc.card, 1, 7)
	if ok {
		d := &pc.dest
		*out = store.PaymentsCardRow{AccountID: driverInt(d[0]), AccountOrgID: driverInt(d[1]), Balance: driverInt(d[2]), CVV: int16(driverInt(d[3])),
			CardFrozen: driverInt(d[4]) != 0, CardExpired: driverInt(d[5]) != 0, AccountFrozen: driverInt(d[6]) != 0}
	}
	pc.clearArgs(1)
	if err != nil {
		return false, payErr("payments: card", err)
	}
	return ok, nil
}

// Transfer is RT4.
func (pc *paymentsConn) Transfer(ctx context.Context, t *store.PaymentsTransfer) error {
	t.ID, t.CreatedUs, t.Insufficient = 0, 0, false
	if err := pc.c.watch(ctx); err != nil {
		return opErr("payments: transfer", err)
	}
	var err error
	if pc.routine {
		pc.setTransfer(t)
		pc.args[5].Value = t.PayerFirst
		err = pc.returning(pc.call, 6, t)
	} else {
		err = pc.clientTransfer(t)
	}
	err = pc.c.unwatch(ctx, err)
	pc.clearArgs(6)
	if err == nil {
		return nil
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok && (me.Number == erConstraintFailed || me.Number == erCheckConstraintViolated) {
		t.ID, t.CreatedUs, t.Insufficient = 0, 0, true
		return nil
	}
	t.ID, t.CreatedUs = 0, 0
	return payErr("payments: transfer", err)
}

func (pc *paymentsConn) setTransfer(t *store.PaymentsTransfer) {
	pc.args[0].Value, pc.args[1].Value, pc.args[2].Value, pc.args[3].Value, pc.args[4].Value = t.Card, t.From, t.To, t.User, t.Amount
}

// returning runs st (CALL or INSERT … RETURNING) and reads id and created_at.
func (pc *paymentsConn) returning(st *stmt, n int, t *store.PaymentsTransfer) error {
	ok, err := pc.queryRow1(st, n, 2)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("transfer returned no row")
	}
	t.ID, t.CreatedUs = driverInt(pc.dest[0]), driverInt(pc.dest[1])
	return nil
}

func (pc *paymentsConn) clientTransfer(t *store.PaymentsTransfer) error {
	tx, err := pc.begin.BeginTx(context.Background(), driver.TxOptions{})
	if err != nil {
		return err
	}
	if err = pc.clientSteps(t); err == nil {
		if err = tx.Commit(); err == nil {
			return nil
		}
		return err // the driver has ended the transaction
	}
	_ = tx.Rollback()
	return err
}

func (pc *paymentsConn) clientSteps(t *store.PaymentsTransfer) error {
	for _, u := range t.Updates() {
		pc.args[0].Value, pc.args[1].Value = u.Delta, u.Account
		res, err := pc.update.ExecContext(context.Background(), pc.args[:2])
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("transfer: account %d updated %d rows, want 1 (%v)", u.Account, n, err)
		}
	}
	pc.setTransfer(t)
	if pc.maria {
		return pc.returning(pc.insert, 5, t)
	}
	if _, err := pc.insert.ExecContext(context.Background(), pc.args[:5]); err != nil {
		return err
	}
	return pc.returning(pc.last, 0, t)
}

// DeleteTransfer deletes the first transfer at or after fromID.
func (pc *paymentsConn) DeleteTransfer(ctx context.Context, fromID int64, out *store.PaymentsDeleted) (bool, error) {
	if err := pc.c.watch(ctx); err != nil {
		return false, opErr("payments: delete", err)
	}
	var ok bool
	var err error
	if pc.maria {
		pc.args[0].Value = fromID
		ok, err = pc.queryRow1(pc.del, 1, 5)
	} else {
		ok, err = pc.selectDelete(fromID)
	}
	if ok {
		d := &pc.dest
		*out = store.PaymentsDeleted{ID: driverInt(d[0]), From: driverInt(d[1]), To: driverInt(d[2]), Amount: driverInt(d[3]), CreatedUs: driverInt(d[4])}
	}
	err = pc.c.unwatch(ctx, err)
	pc.clearArgs(1)
	if err != nil {
		return false, payErr("payments: delete", err)
	}
	return ok, nil
}

// selectDelete is MySQL's delete: SELECT … FOR UPDATE, then DELETE by id.
func (pc *paymentsConn) selectDelete(fromID int64) (bool, error) {
	tx, err := pc.begin.BeginTx(context.Background(), driver.TxOptions{})
	if err != nil {
		return false, err
	}
	pc.args[0].Value = fromID
	ok, err := pc.queryRow1(pc.del, 1, 5)
	if err == nil && ok {
		pc.args[0].Value = pc.dest[0]
		_, err = pc.delID.ExecContext(context.Background(), pc.args[:1])
	}
	if err != nil {
		_ = tx.Rollback()
		return false, err
	}
	return ok, tx.Commit()
}
