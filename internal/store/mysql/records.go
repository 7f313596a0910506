package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Records (the ycsb workload) are rows of <database>.usertable, laid out
// as YCSB's JDBC binding's table: YCSB_KEY VARCHAR(255) PRIMARY KEY, then
// one TEXT column per field. Its statements are YCSB's, prepared on the
// server per connection: a read is SELECT * by key, a scan SELECT * WHERE
// YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?, an update UPDATE … SET of the
// field(s), an insert INSERT. The table lives in the namespace database, so
// Close's drop of the database removes it.

var _ store.Records = (*Store)(nil)

// RecordsSetup drops a usertable a run left in the database and creates
// it for fields.
func (s *Store) RecordsSetup(ctx context.Context, fields []string) (string, error) {
	if len(fields) == 0 {
		return "", errors.New("mysql: records: no fields")
	}
	table := s.db + ".usertable"
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = "`" + strings.ReplaceAll(strings.ToUpper(f), "`", "``") + "`"
	}
	r := store.NewRecordsSQL(`CREATE TABLE`, table, ` ENGINE=InnoDB`, cols, func(int) string { return "?" })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	exists, owned, err := s.owned(ctx)
	if err := store.RequireOwned("mysql", "records setup", "database "+s.db, s.ns.Marker, exists, owned, err); err != nil {
		return "", err
	}
	for _, q := range []string{`DROP TABLE IF EXISTS ` + table, r.DDL} {
		if _, err := s.admin.ExecContext(ctx, q); err != nil {
			return "", opErr("records setup", err)
		}
	}
	s.records = &r
	return r.RecordsLayout(), nil
}

// RecordsOpen connects a worker's connection and prepares the records'
// statements on it.
func (s *Store) RecordsOpen(ctx context.Context) (store.RecordsConn, error) {
	s.mu.Lock()
	r := s.records
	s.mu.Unlock()
	if r == nil {
		return nil, errors.New("mysql: records: RecordsSetup was not called")
	}
	cctx, cancel := context.WithTimeout(ctx, s.client.Timeout)
	defer cancel()
	c, err := s.open(cctx, blockio.Use(ctx), false)
	if err != nil {
		return nil, err
	}
	rc := &recordsConn{Client: c, fields: len(r.Update), args: make([]driver.NamedValue, len(r.Update)+1), dest: make([]driver.Value, len(r.Update)+1), view: make([][]byte, len(r.Update))}
	rc.copyRow = rc.copyInto
	for i := range rc.args {
		rc.args[i].Ordinal = i + 1
	}
	prep, ok := c.conn.(driver.ConnPrepareContext)
	if !ok {
		c.conn.Close()
		return nil, fmt.Errorf("mysql: driver connection %T cannot prepare with a context", c.conn)
	}
	prepare := func(name, q string) *stmt {
		if err != nil {
			return nil
		}
		var st driver.Stmt
		var prepared *stmt
		if st, err = prep.PrepareContext(cctx, q); err == nil {
			prepared, err = asStmt(st)
		}
		if err != nil {
			err = opErr("records: prepare "+name, err)
			return nil
		}
		rc.stmts = append(rc.stmts, prepared)
		return prepared
	}
	rc.insert = prepare("insert", r.Insert)
	rc.read = prepare("read", r.Read)
	rc.updateAll = prepare("update", r.UpdateAll)
	rc.scan = prepare("scan", r.Scan)
	for i, q := range r.Update {
		rc.update = append(rc.update, prepare(fmt.Sprintf("update %d", i), q))
	}
	if err != nil {
		rc.Close()
		return nil, err
	}
	return rc, nil
}

// recordsConn is a worker's client with the records' prepared statements.
type recordsConn struct {
	*Client
	fields                        int
	insert, read, updateAll, scan *stmt
	update                        []*stmt
	stmts                         []*stmt // every one, to close
	args                          []driver.NamedValue
	dest                          []driver.Value
	view                          [][]byte                              // a row's fields, in the driver's buffer
	dst                           [][]byte                              // Read's
	copyRow                       func(key []byte, vals [][]byte) error // c.copyInto, bound once
}

// Close closes the statements and the connection.
func (c *recordsConn) Close() error {
	var err error
	for _, st := range c.stmts {
		err = errors.Join(err, st.Close())
	}
	return errors.Join(err, c.Client.Close())
}

// write runs st with args and forgets them.
func (c *recordsConn) write(ctx context.Context, op string, st *stmt, args []driver.NamedValue) error {
	err := c.exec(ctx, st, args)
	c.forget()
	if err != nil {
		return opErr(op, err)
	}
	return nil
}

// forget drops the arguments and values: no reference to the caller's
// bytes or the driver's buffer is kept.
func (c *recordsConn) forget() {
	for i := range c.args {
		c.args[i].Value = nil
	}
	clear(c.dest)
	clear(c.view)
}

func (c *recordsConn) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	c.args[0].Value = store.NonNil(key)
	for i, v := range vals[:c.fields] {
		c.args[i+1].Value = store.NonNil(v)
	}
	return c.write(ctx, "records: insert", c.insert, c.args)
}

func (c *recordsConn) Update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	if field >= 0 {
		c.args[0].Value, c.args[1].Value = store.NonNil(vals[field]), store.NonNil(key)
		return c.write(ctx, "records: update", c.update[field], c.args[:2])
	}
	for i, v := range vals[:c.fields] {
		c.args[i].Value = store.NonNil(v)
	}
	c.args[c.fields].Value = store.NonNil(key)
	return c.write(ctx, "records: update", c.updateAll, c.args)
}

// rows runs the query st and hands each row's key and fields to row,
// whose error stops it and is returned as it is.
func (c *recordsConn) rows(ctx context.Context, op string, st *stmt, args []driver.NamedValue, row func(key []byte, vals [][]byte) error) (int, error) {
	if err := c.watch(ctx); err != nil {
		return 0, opErr(op, err)
	}
	n, rowErr, err := c.rows1(st, args, row)
	c.forget()
	if err = c.unwatch(ctx, err); err != nil {
		return n, opErr(op, err)
	}
	return n, rowErr
}

func (c *recordsConn) rows1(st *stmt, args []driver.NamedValue, row func(key []byte, vals [][]byte) error) (n int, rowErr, err error) {
	rows, err := st.QueryContext(context.Background(), args)
	if err != nil {
		return 0, nil, err
	}
	for err == nil && rowErr == nil {
		if err = rows.Next(c.dest); err != nil {
			break
		}
		var key []byte
		for i, v := range c.dest {
			b, ok := v.([]byte)
			if !ok && v != nil {
				err = fmt.Errorf("column %d is a %T, want bytes", i, v)
				break
			}
			if i == 0 {
				key = b
			} else {
				c.view[i-1] = b
			}
		}
		if err == nil {
			if rowErr = row(key, c.view); rowErr == nil {
				n++
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	return n, rowErr, errors.Join(err, rows.Close())
}

// Read reads every field (SELECT *, as YCSB's JDBC binding does also for
// one field).
func (c *recordsConn) Read(ctx context.Context, key []byte, _ int, dst [][]byte) (bool, error) {
	c.args[0].Value = store.NonNil(key)
	c.dst = dst
	n, err := c.rows(ctx, "records: read", c.read, c.args[:1], c.copyRow)
	c.dst = nil
	return n > 0 && err == nil, err
}

// copyInto copies a row's fields into c.dst (Read's): the driver's bytes
// are its read buffer's.
func (c *recordsConn) copyInto(_ []byte, vals [][]byte) error {
	for i, v := range vals {
		c.dst[i] = append(c.dst[i][:0], v...)
	}
	return nil
}

func (c *recordsConn) Scan(ctx context.Context, start []byte, n int, fn func(key []byte, vals [][]byte) error) (int, error) {
	c.args[0].Value, c.args[1].Value = store.NonNil(start), int64(max(n, 0))
	return c.rows(ctx, "records: scan", c.scan, c.args[:2], fn)
}
