package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Records (the ycsb workload) are rows of <schema>.usertable, laid out as
// YCSB's JDBC binding's table: ycsb_key varchar(255) PRIMARY KEY, then one
// text column per field. Its statements are YCSB's: a read is SELECT * by
// key, a scan SELECT * WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2, an
// update UPDATE … SET of the field(s), an insert INSERT. The table lives in
// the store's schema, so Close's drop of the schema removes it.

var _ store.Records = (*Store)(nil)

// recordsTable is the table's name inside the schema, YCSB's.
const recordsTable = "usertable"

// RecordsSetup drops a usertable a run left in the schema and creates it
// for fields (unlogged under the unlogged design, as the kv table).
func (s *Store) RecordsSetup(ctx context.Context, fields []string) (string, error) {
	if len(fields) == 0 {
		return "", fmt.Errorf("postgres: records: no fields")
	}
	d, _ := parseDesign(s.cfg.Design) // validated by New
	unlogged := ""
	if d.unlogged {
		unlogged = "UNLOGGED "
	}
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = pgx.Identifier{f}.Sanitize()
	}
	r := store.NewRecordsSQL(`CREATE `+unlogged+`TABLE`, s.schema+"."+recordsTable, "", cols, func(n int) string { return "$" + strconv.Itoa(n) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	exists, owned, err := s.owned(ctx)
	if err := store.RequireOwned("postgres", "records setup", "schema "+s.schema, fmt.Sprintf("%q comment", Marker), exists, owned, err); err != nil {
		return "", err
	}
	for _, q := range []string{`DROP TABLE IF EXISTS ` + s.schema + "." + recordsTable, r.DDL} {
		if _, err := s.admin.Exec(ctx, q); err != nil {
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
	r, closed := s.records, s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if r == nil {
		return nil, fmt.Errorf("postgres: records: RecordsSetup was not called")
	}
	block := blockio.Use(ctx)
	conn, err := s.connect(ctx, block)
	if err != nil {
		return nil, err
	}
	const varchar, text, int8 = 1043, 25, 20
	fields := len(r.Update)
	c := &recordsConn{conn: conn, pg: conn.PgConn(), blocking: block, fields: fields, params: make([][]byte, fields+1)}
	fieldOIDs := func(first uint32, n int, last ...uint32) []uint32 {
		oids := []uint32{first}
		for range n {
			oids = append(oids, text)
		}
		return append(oids, last...)
	}
	prepare := func(name, sql string, oids []uint32) *pgconn.StatementDescription {
		if err != nil {
			return nil
		}
		var sd *pgconn.StatementDescription
		if sd, err = c.pg.Prepare(ctx, name, sql, oids); err != nil {
			err = opErr("records: prepare "+name, err)
		}
		return sd
	}
	c.insert = prepare("sb_rec_insert", r.Insert, fieldOIDs(varchar, fields))
	c.read = prepare("sb_rec_read", r.Read, []uint32{varchar})
	c.updateAll = prepare("sb_rec_update", r.UpdateAll, append(fieldOIDs(text, fields-1), varchar))
	c.scan = prepare("sb_rec_scan", r.Scan, []uint32{varchar, int8})
	for i, q := range r.Update {
		c.update = append(c.update, prepare("sb_rec_update_"+strconv.Itoa(i), q, []uint32{text, varchar}))
	}
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// recordsConn is one worker's connection with its prepared statements.
type recordsConn struct {
	conn                          *pgx.Conn
	pg                            *pgconn.PgConn
	blocking                      bool
	fields                        int
	insert, read, updateAll, scan *pgconn.StatementDescription
	update                        []*pgconn.StatementDescription
	params                        [][]byte // fields+1, reused
	limit                         [8]byte
}

// ClientIO says how the connection waits for the server (blockio.Mode*).
func (c *recordsConn) ClientIO() string { return blockio.ModeOf(c.blocking) }

func (c *recordsConn) Close() error { return closeConn(c.conn, "records: close") }

// start executes sd with params, binary in and out; finish reads its
// reply's end and forgets the parameters (no reference to the caller's
// bytes is kept). Reads walk the rows in between, without a callback of
// their own per op.
func (c *recordsConn) start(ctx context.Context, op string, sd *pgconn.StatementDescription, params [][]byte) (*pgconn.ResultReader, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		clear(c.params)
		return nil, opErr(op, err)
	}
	return c.pg.ExecStatement(ctx, sd, params, binary1, binary1), nil
}

func (c *recordsConn) finish(rr *pgconn.ResultReader, op string, rowErr error) error {
	_, err := rr.Close()
	clear(c.params)
	if err != nil {
		return opErr(op, err)
	}
	return rowErr
}

// write runs a statement that returns no rows.
func (c *recordsConn) write(ctx context.Context, op string, sd *pgconn.StatementDescription, params [][]byte) error {
	rr, err := c.start(ctx, op, sd, params)
	if err != nil {
		return err
	}
	return c.finish(rr, op, nil)
}

// checkRow refuses a row that is not the key and the fields.
func (c *recordsConn) checkRow(op string, vals [][]byte) error {
	if len(vals) != c.fields+1 {
		return opErr(op, fmt.Errorf("a row of %d columns, want the key and %d fields", len(vals), c.fields))
	}
	return nil
}

func (c *recordsConn) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	c.params[0] = store.NonNil(key)
	for i, v := range vals[:c.fields] {
		c.params[i+1] = store.NonNil(v)
	}
	return c.write(ctx, "records: insert", c.insert, c.params)
}

// Read reads every field (SELECT *, as YCSB's JDBC binding does also for
// one field).
func (c *recordsConn) Read(ctx context.Context, key []byte, _ int, dst [][]byte) (bool, error) {
	const op = "records: read"
	c.params[0] = store.NonNil(key)
	rr, err := c.start(ctx, op, c.read, c.params[:1])
	if err != nil {
		return false, err
	}
	ok := false
	var rowErr error
	for rr.NextRow() {
		vals := rr.Values()
		if rowErr = c.checkRow(op, vals); rowErr == nil {
			for i, v := range vals[1:] {
				dst[i] = append(dst[i][:0], v...)
			}
			ok = true
		}
	}
	err = c.finish(rr, op, rowErr)
	return ok && err == nil, err
}

func (c *recordsConn) Update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	if field >= 0 {
		c.params[0], c.params[1] = store.NonNil(vals[field]), store.NonNil(key)
		return c.write(ctx, "records: update", c.update[field], c.params[:2])
	}
	for i, v := range vals[:c.fields] {
		c.params[i] = store.NonNil(v)
	}
	c.params[c.fields] = store.NonNil(key)
	return c.write(ctx, "records: update", c.updateAll, c.params)
}

func (c *recordsConn) Scan(ctx context.Context, start []byte, n int, fn func(key []byte, vals [][]byte) error) (int, error) {
	const op = "records: scan"
	binary.BigEndian.PutUint64(c.limit[:], uint64(max(n, 0)))
	c.params[0], c.params[1] = store.NonNil(start), c.limit[:]
	rr, err := c.start(ctx, op, c.scan, c.params[:2])
	if err != nil {
		return 0, err
	}
	got := 0
	var rowErr error
	for rr.NextRow() {
		if rowErr != nil {
			continue // read the rest of the reply
		}
		vals := rr.Values()
		if rowErr = c.checkRow(op, vals); rowErr == nil {
			if rowErr = fn(vals[0], vals[1:]); rowErr == nil {
				got++
			}
		}
	}
	return got, c.finish(rr, op, rowErr)
}
