package mysql

// Sessions (the sessions workload): table <namespace>.sessions (id
// AUTO_INCREMENT PRIMARY KEY, payload, expires_at BIGINT) in the store's
// own database, expires_at in milliseconds by the server's clock. The knobs
// InnoDB has: id type, payload type (TEXT; JSON; BLOB for bytea), an index
// on expires_at, NOT NULL and VARCHAR(256). The only asynchronous commit is
// the server-wide innodb_flush_log_at_trx_commit=2 (profile "relaxed").
//
//	create     INSERT INTO t (payload, expires_at) VALUES (?, now + ttl)
//	read       SELECT payload FROM t WHERE id = ? AND expires_at > now;
//	           keeping alive on read adds an UPDATE (MariaDB has no
//	           UPDATE … RETURNING): two statements per read
//	keepalive  UPDATE t SET expires_at = now + ttl WHERE id IN (…) AND
//	           expires_at > now [AND expires_at < now + refresh], 1000 ids
//	           per statement (text protocol: the ids are integers)
//	reap       DELETE FROM t WHERE expires_at < now LIMIT n (native), or
//	           one unbounded DELETE

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// SessionChunk is how many ids one keepalive statement carries.
const SessionChunk = 1000

var _ store.Sessions = (*Store)(nil)

type sessionClient struct {
	c     *Client
	s     *Store
	d     store.SessionDesign
	table string
	ttl   string // "<nowMS> + <ms>"
	ddl   string

	create, read, touch, reapN *stmt
	args                       [2]driver.NamedValue
	dest                       [1]driver.Value
	q                          []byte
}

// OpenSessions opens a session handle on a connection of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	c, err := store.OpenChecked[*Client](ctx, s, d.CheckTimes("mysql", time.Millisecond, "at least 1 ms"))
	if err != nil {
		return nil, err
	}
	h := &sessionClient{c: c, s: s, d: d, table: s.db + ".sessions"}
	h.ttl = nowMS + " + " + strconv.FormatInt(d.TTL.Milliseconds(), 10)
	idType := "BIGINT"
	if d.IDType == "int" {
		idType = "INT"
	}
	ptype := "TEXT"
	switch {
	case d.PayloadType == "bytea":
		ptype = "BLOB"
	case d.PayloadType == "json" || d.PayloadType == "jsonb":
		ptype = "JSON"
	case d.Constraints:
		ptype = "VARCHAR(256)"
	}
	notNull := " NULL"
	if d.Constraints {
		notNull = " NOT NULL"
	}
	index := ""
	if d.ExpiresIndex {
		index = ", INDEX sessions_expires_at (expires_at)"
	}
	h.ddl = `CREATE TABLE ` + h.table + ` (id ` + idType + ` NOT NULL AUTO_INCREMENT PRIMARY KEY, payload ` + ptype + notNull +
		`, expires_at BIGINT` + notNull + index + `) ENGINE=InnoDB`
	for i := range h.args {
		h.args[i].Ordinal = i + 1
	}
	return h, nil
}

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{ServerIDs: true, Resolution: time.Millisecond}
}

// Close closes the statements and the connection.
func (h *sessionClient) Close() error {
	for _, st := range []*stmt{h.create, h.read, h.touch, h.reapN} {
		if st != nil {
			st.Close()
		}
	}
	return h.c.Close()
}

// Setup drops the sessions table of an earlier design and creates this
// design's, after checking the database's marker.
func (h *sessionClient) Setup(ctx context.Context) error {
	if err := h.s.ns.Check(ctx, "sessions setup"); err != nil {
		return err
	}
	for _, q := range []string{`DROP TABLE IF EXISTS ` + h.table, h.ddl} {
		if _, err := h.execText(ctx, q); err != nil {
			return opErr("sessions setup: "+q, err)
		}
	}
	return nil
}

// execText runs a statement without parameters (text protocol).
func (h *sessionClient) execText(ctx context.Context, q string) (int64, error) {
	ex, ok := h.c.conn.(driver.ExecerContext)
	if !ok {
		return 0, fmt.Errorf("driver connection %T cannot exec", h.c.conn)
	}
	if err := h.c.watch(ctx); err != nil {
		return 0, err
	}
	res, err := ex.ExecContext(context.Background(), q, nil)
	if err = h.c.unwatch(ctx, err); err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryText runs a query without parameters and returns its rows.
func (h *sessionClient) queryText(ctx context.Context, q string, cols int) ([][]driver.Value, error) {
	qc, ok := h.c.conn.(driver.QueryerContext)
	if !ok {
		return nil, fmt.Errorf("driver connection %T cannot query", h.c.conn)
	}
	if err := h.c.watch(ctx); err != nil {
		return nil, err
	}
	rows, err := qc.QueryContext(context.Background(), q, nil)
	var out [][]driver.Value
	if err == nil {
		for {
			row := make([]driver.Value, cols)
			if e := rows.Next(row); e != nil {
				if e != io.EOF {
					err = e
				}
				break
			}
			out = append(out, row)
		}
		if e := rows.Close(); err == nil {
			err = e
		}
	}
	return out, h.c.unwatch(ctx, err)
}

func (h *sessionClient) prepare(ctx context.Context, st **stmt, q string) error {
	if *st != nil {
		return nil
	}
	prep, ok := h.c.conn.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("mysql: driver connection %T cannot prepare", h.c.conn)
	}
	s, err := prep.PrepareContext(ctx, q)
	if err == nil {
		*st, err = asStmt(s)
	}
	if err != nil {
		return opErr("prepare sessions", err)
	}
	return nil
}

// execStmt runs a prepared statement and returns its result.
func (h *sessionClient) execStmt(ctx context.Context, st *stmt, args []driver.NamedValue) (driver.Result, error) {
	if err := h.c.watch(ctx); err != nil {
		return nil, err
	}
	res, err := st.ExecContext(context.Background(), args)
	return res, h.c.unwatch(ctx, err)
}

func (h *sessionClient) payloadArg(p []byte) any {
	if h.d.PayloadType == "bytea" {
		return store.NonNil(p)
	}
	return string(p)
}

// Create inserts a session and returns its AUTO_INCREMENT id.
func (h *sessionClient) Create(ctx context.Context, _ int64, payload []byte) (int64, error) {
	if err := h.prepare(ctx, &h.create, `INSERT INTO `+h.table+` (payload, expires_at) VALUES (?, `+h.ttl+`)`); err != nil {
		return 0, err
	}
	h.args[0].Value = h.payloadArg(payload)
	id, err := store.LastInsertID(h.execStmt(ctx, h.create, h.args[:1]))
	h.args[0].Value = nil
	if err != nil {
		return 0, opErr("create session", err)
	}
	return id, nil
}

// Read returns the unexpired session's payload; keeping alive on read
// extends it with a second statement after a hit.
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := h.prepare(ctx, &h.read, `SELECT payload FROM `+h.table+` WHERE id = ? AND expires_at > `+nowMS); err != nil {
		return dst, false, err
	}
	h.args[0].Value = id
	if err := h.c.watch(ctx); err != nil {
		return dst, false, opErr("read session", err)
	}
	ok, err := h.read1(&dst)
	if err = h.c.unwatch(ctx, err); err != nil {
		return dst[:0], false, opErr("read session", err)
	}
	if ok && h.d.KeepaliveOnRead {
		q := `UPDATE ` + h.table + ` SET expires_at = ` + h.ttl + ` WHERE id = ? AND expires_at > ` + nowMS
		if h.d.RefreshBelow > 0 {
			q += ` AND expires_at < ` + nowMS + ` + ` + strconv.FormatInt(h.d.RefreshBelow.Milliseconds(), 10)
		}
		if err := h.prepare(ctx, &h.touch, q); err != nil {
			return dst, ok, err
		}
		h.args[0].Value = id
		if _, err := h.execStmt(ctx, h.touch, h.args[:1]); err != nil {
			return dst, ok, opErr("read session: keepalive", err)
		}
	}
	return dst, ok, nil
}

func (h *sessionClient) read1(dst *[]byte) (bool, error) {
	rows, err := h.read.QueryContext(context.Background(), h.args[:1])
	if err != nil {
		return false, err
	}
	return appendValue(rows, &h.dest, dst)
}

// KeepAlive extends the live sessions among ids, SessionChunk per statement.
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	var n int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), SessionChunk)]
		ids = ids[len(chunk):]
		h.q = append(h.q[:0], `UPDATE `+h.table+` SET expires_at = `+h.ttl+` WHERE id IN (`...)
		for i, id := range chunk {
			if i > 0 {
				h.q = append(h.q, ',')
			}
			h.q = strconv.AppendInt(h.q, id, 10)
		}
		h.q = append(h.q, `) AND expires_at > `+nowMS...)
		if h.d.RefreshBelow > 0 {
			h.q = append(h.q, ` AND expires_at < `+nowMS+` + `...)
			h.q = strconv.AppendInt(h.q, h.d.RefreshBelow.Milliseconds(), 10)
		}
		m, err := h.execText(ctx, string(h.q))
		if err != nil {
			return n, opErr("keepalive", err)
		}
		n += m
	}
	return n, nil
}

// Reap deletes up to limit expired sessions (DELETE … LIMIT), or every
// expired one when limit is 0.
func (h *sessionClient) Reap(ctx context.Context, limit int) (int64, error) {
	q := `DELETE FROM ` + h.table + ` WHERE expires_at < ` + nowMS
	if limit <= 0 {
		n, err := h.execText(ctx, q)
		if err != nil {
			return 0, opErr("reap", err)
		}
		return n, nil
	}
	if err := h.prepare(ctx, &h.reapN, q+` LIMIT ?`); err != nil {
		return 0, err
	}
	h.args[0].Value = int64(limit)
	n, err := store.RowsAffected(h.execStmt(ctx, h.reapN, h.args[:1]))
	if err != nil {
		return 0, opErr("reap", err)
	}
	return n, nil
}

// Observe counts rows, expired rows and the oldest expiry, and reads the
// table's size and InnoDB's purge backlog.
func (h *sessionClient) Observe(ctx context.Context) (store.SessionSample, error) {
	rows, err := h.queryText(ctx, `SELECT count(*), coalesce(sum(expires_at <= `+nowMS+`), 0),
		coalesce(`+nowMS+` - min(CASE WHEN expires_at <= `+nowMS+` THEN expires_at END), 0) FROM `+h.table, 3)
	if err != nil || len(rows) != 1 {
		return store.SessionSample{}, opErr("observe sessions", errors.Join(err, errors.New("no row")))
	}
	n, expired, oldest := driverInt(rows[0][0]), driverInt(rows[0][1]), driverInt(rows[0][2])
	m := map[string]float64{"rows": float64(n), "expired_rows": float64(expired)}
	sizes, err := h.queryText(ctx, `SELECT DATA_LENGTH, INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = '`+h.s.cfg.Namespace+`' AND TABLE_NAME = 'sessions'`, 3)
	if err != nil {
		return store.SessionSample{}, opErr("observe sessions: sizes", err)
	}
	var bytes int64
	if len(sizes) == 1 {
		m["data_bytes"], m["index_bytes"], m["data_free"] = float64(driverInt(sizes[0][0])), float64(driverInt(sizes[0][1])), float64(driverInt(sizes[0][2]))
		bytes = driverInt(sizes[0][0]) + driverInt(sizes[0][1])
	}
	if hist, err := h.queryText(ctx, `SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'`, 1); err == nil && len(hist) == 1 {
		m["history_list_length"] = float64(driverInt(hist[0][0]))
	}
	return store.SessionSample{Rows: n, Expired: expired, OldestExpired: time.Duration(oldest) * time.Millisecond, Bytes: bytes, Metrics: m}, nil
}

// Describe reads SHOW CREATE TABLE and the durability setting back.
func (h *sessionClient) Describe(ctx context.Context) (map[string]string, error) {
	rows, err := h.queryText(ctx, `SHOW CREATE TABLE `+h.table, 2)
	if err != nil || len(rows) != 1 {
		return nil, opErr("describe sessions", errors.Join(err, errors.New("no table")))
	}
	out := map[string]string{"ddl": asString(rows[0][1])}
	vars, err := h.queryText(ctx, `SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit', 'version')`, 2)
	if err != nil {
		return nil, opErr("describe sessions", err)
	}
	for _, v := range vars {
		out[asString(v[0])] = asString(v[1])
	}
	out["reap"] = "DELETE FROM t WHERE expires_at < now LIMIT n"
	if h.d.KeepaliveOnRead {
		out["read"] = "SELECT, then UPDATE of the session's expiry (no UPDATE … RETURNING in MariaDB)"
	}
	return out, nil
}

func asString(v driver.Value) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// ServerSettings asks for nothing: commit durability is the server profile.
func (h *sessionClient) ServerSettings(context.Context) (map[string]string, error) { return nil, nil }

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"id", "payload", "expires_index", "reap", "keepalive", "skip_fresh", "constraints"}
}
