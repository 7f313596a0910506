package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/storebench/storebench/internal/store"
)

// Records (the ycsb workload) are rows of table "<namespace>_usertable",
// laid out as YCSB's JDBC binding's usertable: YCSB_KEY VARCHAR(255)
// PRIMARY KEY (TEXT affinity, compared as bytes: SQLite's BINARY
// collation), then one TEXT column per field; recorded in
// storebench_owned, dropped by Close and by clean. Its statements are
// YCSB's, prepared per connection: a read is SELECT * by key, a scan
// SELECT * WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?, an update
// UPDATE … SET of the field(s), an insert INSERT.

var _ store.Records = (*Store)(nil)

// recordsSuffix follows "<namespace>_" in the records table's name.
const recordsSuffix = "usertable"

func (s *Store) recordsName() string { return s.cfg.Namespace + "_" + recordsSuffix }

// RecordsSetup drops the records table a run left (only when
// storebench_owned lists it) and creates it for fields, in one
// transaction.
func (s *Store) RecordsSetup(ctx context.Context, fields []string) (string, error) {
	if len(fields) == 0 {
		return "", errors.New("sqlite: records: no fields")
	}
	name := s.recordsName()
	table := `"` + name + `"`
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = `"` + strings.ReplaceAll(strings.ToUpper(f), `"`, `""`) + `"`
	}
	r := store.NewRecordsSQL(`CREATE TABLE`, table, "", cols, func(int) string { return "?" })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	err := inTx(ctx, s.db, "records setup", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, ownedTableDDL); err != nil {
			return fmt.Errorf("sqlite: records setup: %w", err)
		}
		exists, owned, err := tableState(ctx, tx, name)
		if err != nil {
			return fmt.Errorf("sqlite: records setup: %w", err)
		}
		if exists && !owned {
			return fmt.Errorf("sqlite: table %s exists but is not recorded in storebench_owned: %w", table, store.ErrNotOwned)
		}
		for _, q := range []string{
			`DROP TABLE IF EXISTS ` + table, r.DDL,
			`INSERT OR REPLACE INTO storebench_owned (name, created_at) VALUES ('` + name + `', datetime('now'))`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: records setup: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	s.records = &r
	return r.RecordsLayout(), nil
}

// dropRecords drops the records table in tx when storebench_owned lists
// it (Close's part for the records).
func (s *Store) dropRecords(ctx context.Context, tx *sql.Tx) error {
	name := s.recordsName()
	_, owned, err := tableState(ctx, tx, name)
	if err != nil || !owned {
		return err
	}
	for _, q := range []string{`DROP TABLE IF EXISTS "` + name + `"`, `DELETE FROM storebench_owned WHERE name = '` + name + `'`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// RecordsOpen pins a connection and prepares the records' statements on
// it.
func (s *Store) RecordsOpen(ctx context.Context) (store.RecordsConn, error) {
	s.mu.Lock()
	r := s.records
	s.mu.Unlock()
	if r == nil {
		return nil, errors.New("sqlite: records: RecordsSetup was not called")
	}
	conn, err := s.pin(ctx, "records: open")
	if err != nil {
		return nil, err
	}
	c := &recordsConn{conn: conn, fields: len(r.Update), args: make([]any, len(r.Update)+1), raw: make([]sql.RawBytes, len(r.Update)+1), dest: make([]any, len(r.Update)+1), view: make([][]byte, len(r.Update))}
	for i := range c.raw {
		c.dest[i] = &c.raw[i]
	}
	prepare := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = conn.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("sqlite: records: prepare: %w", err)
			return nil
		}
		c.stmts = append(c.stmts, st)
		return st
	}
	c.insert, c.read, c.updateAll, c.scan = prepare(r.Insert), prepare(r.Read), prepare(r.UpdateAll), prepare(r.Scan)
	for _, q := range r.Update {
		c.update = append(c.update, prepare(q))
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// recordsConn is one pinned connection with the records' statements.
type recordsConn struct {
	conn                          *sql.Conn
	fields                        int
	insert, read, updateAll, scan *sql.Stmt
	update                        []*sql.Stmt
	stmts                         []*sql.Stmt // every one, to close
	args                          []any
	raw                           []sql.RawBytes // a row's columns, valid until the next
	dest                          []any          // &raw[i]
	view                          [][]byte       // a row's fields
}

// Close closes the statements and returns the connection to the store.
func (c *recordsConn) Close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	if err := c.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("sqlite: records: close: %w", err)
	}
	return nil
}

// write runs st with args and forgets them.
func (c *recordsConn) write(ctx context.Context, op string, st *sql.Stmt, args []any) error {
	ctx, err := store.SyncContext(ctx)
	if err == nil {
		_, err = st.ExecContext(ctx, args...)
	}
	clear(c.args) // keep no reference to the caller's bytes
	if err != nil {
		return opErr(op, err)
	}
	return nil
}

// text is b as a TEXT parameter: the driver binds a []byte as a BLOB,
// which would sort apart from TEXT keys and not be the columns' text.
func text(b []byte) any { return string(b) }

func (c *recordsConn) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	c.args[0] = text(key)
	for i, v := range vals[:c.fields] {
		c.args[i+1] = text(v)
	}
	return c.write(ctx, "records: insert", c.insert, c.args)
}

func (c *recordsConn) Update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	if field >= 0 {
		c.args[0], c.args[1] = text(vals[field]), text(key)
		return c.write(ctx, "records: update", c.update[field], c.args[:2])
	}
	for i, v := range vals[:c.fields] {
		c.args[i] = text(v)
	}
	c.args[c.fields] = text(key)
	return c.write(ctx, "records: update", c.updateAll, c.args)
}

// query runs st and hands each row's key and fields to row, whose error
// stops it and is returned as it is.
func (c *recordsConn) query(ctx context.Context, op string, st *sql.Stmt, args []any, row func(key []byte, vals [][]byte) error) (int, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr(op, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	clear(c.args)
	if err != nil {
		return 0, opErr(op, err)
	}
	n := 0
	var rowErr error
	for rowErr == nil && rows.Next() {
		if err := rows.Scan(c.dest...); err != nil {
			rows.Close()
			return n, opErr(op, err)
		}
		for i := range c.view {
			c.view[i] = c.raw[i+1]
		}
		if rowErr = row(c.raw[0], c.view); rowErr == nil {
			n++
		}
	}
	err = errors.Join(rows.Close(), rows.Err())
	clear(c.raw)
	clear(c.view)
	if err != nil {
		return n, opErr(op, err)
	}
	return n, rowErr
}

// Read reads every field (SELECT *, as YCSB's JDBC binding does also for
// one field).
func (c *recordsConn) Read(ctx context.Context, key []byte, _ int, dst [][]byte) (bool, error) {
	c.args[0] = text(key)
	ok := false
	_, err := c.query(ctx, "records: read", c.read, c.args[:1], func(_ []byte, vals [][]byte) error {
		for i, v := range vals {
			dst[i] = append(dst[i][:0], v...)
		}
		ok = true
		return nil
	})
	return ok && err == nil, err
}

func (c *recordsConn) Scan(ctx context.Context, start []byte, n int, fn func(key []byte, vals [][]byte) error) (int, error) {
	c.args[0], c.args[1] = text(start), int64(max(n, 0))
	return c.query(ctx, "records: scan", c.scan, c.args[:2], fn)
}
