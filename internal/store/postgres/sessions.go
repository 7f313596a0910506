package postgres

// Sessions (the sessions workload): one table <schema>.sessions laid out as
// the store.SessionDesign says, every knob on its own. The SQL is the
// corrected form of the article's (see ../shared/workloads/sessions.md,
// "Errata"):
//
//	read       SELECT payload FROM t WHERE id = $1 AND expires_at > now()
//	keepalive  UPDATE t SET expires_at = now() + ttl WHERE id = ANY($1::bigint[])
//	           AND expires_at > now() [AND expires_at < now() + refresh]
//
// The keepalive's "AND expires_at > now()" goes beyond the spec's
// correction: without it a flush would bring back a session that expired
// after it was read but before the flush, which no cache store does.
//	reap       DELETE FROM t WHERE id IN (SELECT id FROM t WHERE expires_at < now()
//	           LIMIT $1 FOR UPDATE SKIP LOCKED)
//
// With a TIMESTAMP expires_at, now() is LOCALTIMESTAMP everywhere, so no
// comparison depends on an implicit time zone cast. Every insert sets
// expires_at itself (the article's naive table has no default and would
// store NULL, never reaped). Creates return the new id (RETURNING id, and
// new_session() returns bigint), which an application needs to hand out.

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
)

// SessionsTable is the name of the sessions table inside the store's schema.
const SessionsTable = "sessions"

// Transaction forms of an asynchronous-commit INSERT (store.SessionDesign.TxForm).
const (
	TxStatements = "statements"
	TxString     = "string"
	TxPipeline   = "pipeline"
)

// Type OIDs used by the sessions statements.
const (
	oidBytea     = 17
	oidInt8      = 20
	oidText      = 25
	oidJSON      = 114
	oidVarchar   = 1043
	oidInt8Array = 1016
	oidJSONB     = 3802
)

var (
	_ store.Sessions        = (*Store)(nil)
	_ store.SessionReplicas = (*Store)(nil)
	_ store.Reconnector     = (*Store)(nil)
)

// CheckSessionDesign rejects knob values this store does not know.
func CheckSessionDesign(d store.SessionDesign) error {
	var errs []error
	switch d.IDType {
	case "", "int", "bigint":
	default:
		errs = append(errs, fmt.Errorf("id type %q: want int or bigint", d.IDType))
	}
	switch d.PayloadType {
	case "", "jsonb", "text", "json", "bytea":
	default:
		errs = append(errs, fmt.Errorf("payload type %q: want jsonb, text, json or bytea", d.PayloadType))
	}
	switch d.ExpiresType {
	case "", "timestamptz", "timestamp":
	default:
		errs = append(errs, fmt.Errorf("expires type %q: want timestamptz or timestamp", d.ExpiresType))
	}
	switch d.TxForm {
	case "", TxStatements, TxString, TxPipeline:
	default:
		errs = append(errs, fmt.Errorf("tx form %q: want statements, string or pipeline", d.TxForm))
	}
	if d.IDCache < 0 {
		errs = append(errs, fmt.Errorf("identity cache %d: want at least 1", d.IDCache))
	}
	if d.Fillfactor != 0 && (d.Fillfactor < 10 || d.Fillfactor > 100) {
		errs = append(errs, fmt.Errorf("fillfactor %d: want 10-100", d.Fillfactor))
	}
	if d.AutovacuumMaxWorkers < 0 || d.AutovacuumMaxWorkers > 262143 {
		errs = append(errs, fmt.Errorf("autovacuum_max_workers %d out of range", d.AutovacuumMaxWorkers))
	}
	if d.TTL <= 0 {
		errs = append(errs, errors.New("TTL must be positive"))
	}
	if d.RefreshBelow < 0 || d.RefreshBelow > d.TTL {
		errs = append(errs, fmt.Errorf("refresh-below %v must lie between 0 and the TTL %v", d.RefreshBelow, d.TTL))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("postgres: sessions design: %w", err)
	}
	return nil
}

// sessionSQL is every statement of one design.
type sessionSQL struct {
	ddl        []string
	insert     string // INSERT … RETURNING id, or SELECT new_session($1)
	insertLit  string // the INSERT with %s for the payload literal (TxString)
	read       string
	keepalive  string
	reapCapped string
	reapAll    string
	count      string // rows, expired rows, seconds since the oldest expiry
}

func payloadType(d store.SessionDesign) string {
	if d.PayloadType == "" {
		return "text"
	}
	return d.PayloadType
}

// interval is a TTL as a SQL interval literal.
func interval(d time.Duration) string {
	return `interval '` + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + ` seconds'`
}

// buildSessionSQL derives the design's DDL and statements; schema is a
// validated namespace.
func buildSessionSQL(schema string, d store.SessionDesign) sessionSQL {
	q := `"` + schema + `"`
	t := q + `.` + SessionsTable
	now := "now()"
	expType := "timestamptz"
	if d.ExpiresType == "timestamp" {
		now, expType = "localtimestamp", "timestamp"
	}
	idType := "bigint"
	if d.IDType == "int" {
		idType = "int"
	}
	ptype := payloadType(d)
	colType := ptype
	notNull := ""
	if d.Constraints {
		notNull = " NOT NULL"
		if ptype == "text" {
			colType = "varchar(256)"
		}
	}
	identity := " GENERATED ALWAYS AS IDENTITY"
	if d.IDCache > 1 {
		identity += " (CACHE " + strconv.Itoa(d.IDCache) + ")"
	}
	unlogged := ""
	if d.Unlogged {
		unlogged = "UNLOGGED "
	}
	var opts []string
	if d.Fillfactor != 0 && d.Fillfactor != 100 {
		opts = append(opts, "fillfactor = "+strconv.Itoa(d.Fillfactor))
	}
	if d.TableAutovacuum {
		opts = append(opts, "autovacuum_vacuum_threshold = 2000", "autovacuum_vacuum_scale_factor = 0.01", "autovacuum_vacuum_cost_delay = 2")
	}
	with := ""
	if len(opts) > 0 {
		with = " WITH (" + strings.Join(opts, ", ") + ")"
	}
	ttl := now + " + " + interval(d.TTL)
	s := sessionSQL{}
	s.ddl = []string{
		`CREATE ` + unlogged + `TABLE ` + t + ` (id ` + idType + identity + ` PRIMARY KEY, payload ` + colType + notNull +
			`, expires_at ` + expType + notNull + `)` + with,
	}
	if d.ExpiresIndex {
		s.ddl = append(s.ddl, `CREATE INDEX sessions_expires_at ON `+t+` (expires_at)`)
	}
	insert := `INSERT INTO ` + t + ` (payload, expires_at) VALUES ($1, ` + ttl + `) RETURNING id`
	s.insertLit = `INSERT INTO ` + t + ` (payload, expires_at) VALUES (%s, ` + ttl + `) RETURNING id`
	s.insert = insert
	if d.Function {
		setConfig := ""
		if d.AsyncCommit {
			// set_config(…, true) lasts until the end of the transaction, so
			// the commit does not wait for the WAL flush. A SET clause on the
			// function would be undone when it returns, before the commit.
			setConfig = "\n  PERFORM set_config('synchronous_commit', 'off', true);"
		}
		s.ddl = append(s.ddl, `CREATE FUNCTION `+q+`.new_session(p `+colType+`) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE sid bigint;
BEGIN`+setConfig+`
  INSERT INTO `+t+` (payload, expires_at) VALUES (p, `+ttl+`) RETURNING id INTO sid;
  RETURN sid;
END
$fn$`)
		s.insert = `SELECT ` + q + `.new_session($1)`
	}
	live := `expires_at > ` + now
	switch {
	case d.KeepaliveOnRead && d.RefreshBelow > 0:
		// Every read extends, but only a session that needs it is written.
		s.read = `WITH s AS (SELECT payload FROM ` + t + ` WHERE id = $1 AND ` + live + `),
  u AS (UPDATE ` + t + ` SET expires_at = ` + ttl + ` WHERE id = $1 AND ` + live + ` AND expires_at < ` + now + ` + ` + interval(d.RefreshBelow) + `)
SELECT payload FROM s`
	case d.KeepaliveOnRead:
		s.read = `UPDATE ` + t + ` SET expires_at = ` + ttl + ` WHERE id = $1 AND ` + live + ` RETURNING payload`
	default:
		s.read = `SELECT payload FROM ` + t + ` WHERE id = $1 AND ` + live
	}
	// AND expires_at > now(): a keepalive must not bring back a session
	// that expired (and is not reaped yet) since it was read.
	s.keepalive = `UPDATE ` + t + ` SET expires_at = ` + ttl + ` WHERE id = ANY($1::bigint[]) AND ` + live
	if d.RefreshBelow > 0 {
		s.keepalive += ` AND expires_at < ` + now + ` + ` + interval(d.RefreshBelow)
	}
	s.reapCapped = `DELETE FROM ` + t + ` WHERE id IN (SELECT id FROM ` + t + ` WHERE expires_at < ` + now + ` LIMIT $1 FOR UPDATE SKIP LOCKED)`
	s.reapAll = `DELETE FROM ` + t + ` WHERE expires_at < ` + now
	s.count = `SELECT count(*), count(*) FILTER (WHERE expires_at <= ` + now + `),
	coalesce(extract(epoch FROM ` + now + ` - min(expires_at) FILTER (WHERE expires_at <= ` + now + `)), 0)::float8 FROM ` + t
	return s
}

// sessionClient is a Client's session handle.
type sessionClient struct {
	c      *Client
	d      store.SessionDesign
	schema string
	sql    sessionSQL

	insert, read, keep, reapN, reapAll *pgconn.StatementDescription
	payloadOID                         uint32
	payloadFmt                         []int16 // format of the payload, as a parameter and as a result
	params                             [1][]byte
	num                                [8]byte
	arr                                []byte // keepalive's int8[] parameter
	batch                              pgconn.Batch
}

// OpenSessions opens a session handle on a connection of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	if err := CheckSessionDesign(d); err != nil {
		return nil, err
	}
	c, err := s.Open(ctx)
	if err != nil {
		return nil, err
	}
	return c.(*Client).sessions(d), nil
}

// sessions returns the client's session handle for a checked design.
func (c *Client) sessions(d store.SessionDesign) *sessionClient {
	if d.TxForm == "" {
		d.TxForm = TxStatements
	}
	h := &sessionClient{c: c, d: d, schema: c.table[0], payloadFmt: []int16{0}}
	h.sql = buildSessionSQL(h.schema, d)
	switch payloadType(d) {
	case "jsonb":
		h.payloadOID = oidJSONB
	case "json":
		h.payloadOID = oidJSON
	case "bytea":
		h.payloadOID, h.payloadFmt = oidBytea, binary1
	default:
		h.payloadOID = oidText
		if d.Constraints {
			h.payloadOID = oidVarchar
		}
	}
	return h
}

// Close closes the handle's connection.
func (h *sessionClient) Close() error { return h.c.Close() }

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{ServerIDs: true, Resolution: time.Microsecond}
}

// Setup drops the sessions table and function of an earlier design (inside
// the store's own schema only, after checking its marker) and creates this
// design's, in one transaction.
func (h *sessionClient) Setup(ctx context.Context) error {
	var comment *string
	err := h.c.conn.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, h.schema).Scan(&comment)
	if err != nil {
		return opErr("sessions setup: check schema owner", err)
	}
	if comment == nil || *comment != Marker {
		return fmt.Errorf("postgres: sessions setup: schema %q has no %q comment: %w", h.schema, Marker, store.ErrNotOwned)
	}
	q := `"` + h.schema + `"`
	tx, err := h.c.conn.Begin(ctx)
	if err != nil {
		return opErr("sessions setup", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	stmts := append([]string{
		`DROP FUNCTION IF EXISTS ` + q + `.new_session`,
		`DROP TABLE IF EXISTS ` + q + `.` + SessionsTable,
	}, h.sql.ddl...)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return opErr("sessions setup: "+firstLine(s), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return opErr("sessions setup", err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// prepare prepares the statement once, on first use.
func (h *sessionClient) prepare(ctx context.Context, sd **pgconn.StatementDescription, name, sql string, oids []uint32) error {
	if *sd != nil {
		return nil
	}
	var err error
	if *sd, err = h.c.pg.Prepare(ctx, name, sql, oids); err != nil {
		return opErr("prepare "+name, err)
	}
	return nil
}

// Create inserts one session and returns its id.
func (h *sessionClient) Create(ctx context.Context, _ int64, payload []byte) (int64, error) {
	if h.d.AsyncCommit && !h.d.Function && h.d.TxForm == TxString {
		return h.createString(ctx, payload)
	}
	if err := h.prepare(ctx, &h.insert, "sb_s_insert", h.sql.insert, []uint32{h.payloadOID}); err != nil {
		return 0, err
	}
	h.params[0] = store.NonNil(payload)
	defer func() { h.params[0] = nil }()
	var rr *pgconn.ResultReader
	switch {
	case !h.d.AsyncCommit || h.d.Function:
		rr = h.c.pg.ExecStatement(ctx, h.insert, h.params[:], h.payloadFmt, binary1)
		return readID(rr, "create")
	case h.d.TxForm == TxPipeline:
		var id int64
		err := h.pipelined(ctx, h.insert, h.params[:], h.payloadFmt, binary1, func(rr *pgconn.ResultReader) error {
			var err error
			id, err = readID(rr, "create")
			return err
		})
		return id, err
	}
	// The article's form: four statements, four round trips.
	if err := h.simple(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	if err := h.simple(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		h.rollback(ctx)
		return 0, err
	}
	id, err := readID(h.c.pg.ExecStatement(ctx, h.insert, h.params[:], h.payloadFmt, binary1), "create")
	if err != nil {
		h.rollback(ctx)
		return 0, err
	}
	if err := h.simple(ctx, "COMMIT"); err != nil {
		h.rollback(ctx)
		return 0, err
	}
	return id, nil
}

// createString sends the transaction as one multi-statement string (simple
// protocol, the payload as a literal): one round trip.
func (h *sessionClient) createString(ctx context.Context, payload []byte) (int64, error) {
	lit := literal(payload, payloadType(h.d) == "bytea")
	sql := "BEGIN; SET LOCAL synchronous_commit = off; " + fmt.Sprintf(h.sql.insertLit, lit) + "; COMMIT"
	res, err := h.c.pg.Exec(ctx, sql).ReadAll()
	if err != nil {
		h.rollback(ctx)
		return 0, opErr("create", err)
	}
	for _, r := range res {
		if len(r.Rows) == 1 && len(r.Rows[0]) == 1 {
			id, err := strconv.ParseInt(string(r.Rows[0][0]), 10, 64)
			if err != nil {
				return 0, opErr("create", fmt.Errorf("bad id %q: %w", r.Rows[0][0], err))
			}
			return id, nil
		}
	}
	return 0, opErr("create", errors.New("no id returned"))
}

// literal quotes payload as a SQL string literal (standard_conforming_strings
// is on by default since 9.1), or as a bytea hex literal.
func literal(payload []byte, bytea bool) string {
	if bytea {
		return `'\x` + hex.EncodeToString(payload) + `'::bytea`
	}
	return `'` + strings.ReplaceAll(string(payload), `'`, `''`) + `'`
}

func (h *sessionClient) simple(ctx context.Context, sql string) error {
	if _, err := h.c.pg.Exec(ctx, sql).ReadAll(); err != nil {
		return opErr(strings.ToLower(strings.Fields(sql)[0]), err)
	}
	return nil
}

// rollback ends a transaction a failed statement left open.
func (h *sessionClient) rollback(ctx context.Context) {
	if s := h.c.pg.TxStatus(); s == 'T' || s == 'E' {
		_, _ = h.c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
	}
}

// pipelined runs one prepared statement as BEGIN; SET LOCAL
// synchronous_commit = off; statement; COMMIT, sent together: one round trip.
func (h *sessionClient) pipelined(ctx context.Context, sd *pgconn.StatementDescription, params [][]byte, pf, rf []int16, each func(*pgconn.ResultReader) error) error {
	h.batch = pgconn.Batch{}
	h.batch.ExecParams("BEGIN", nil, nil, nil, nil)
	h.batch.ExecParams("SET LOCAL synchronous_commit = off", nil, nil, nil, nil)
	h.batch.ExecStatement(sd, params, pf, rf)
	h.batch.ExecParams("COMMIT", nil, nil, nil, nil)
	mrr := h.c.pg.ExecBatch(ctx, &h.batch)
	var firstErr error
	for i := 0; mrr.NextResult(); i++ {
		rr := mrr.ResultReader()
		if i == 2 {
			if err := each(rr); err != nil && firstErr == nil {
				firstErr = err
			}
			continue
		}
		if _, err := rr.Close(); err != nil && firstErr == nil {
			firstErr = opErr(sd.Name, err)
		}
	}
	if err := mrr.Close(); err != nil && firstErr == nil {
		firstErr = opErr(sd.Name, err)
	}
	if firstErr != nil {
		h.rollback(ctx)
	}
	return firstErr
}

// readID reads the one int4 or int8 a create returns.
func readID(rr *pgconn.ResultReader, op string) (int64, error) {
	var id int64
	var bad error
	n := 0
	for rr.NextRow() {
		n++
		v := rr.Values()[0]
		switch len(v) {
		case 8:
			id = int64(binary.BigEndian.Uint64(v))
		case 4:
			id = int64(int32(binary.BigEndian.Uint32(v)))
		default:
			bad = fmt.Errorf("id of %d bytes", len(v))
		}
	}
	if _, err := rr.Close(); err != nil {
		return 0, opErr(op, err)
	}
	if bad != nil {
		return 0, opErr(op, bad)
	}
	if n != 1 {
		return 0, opErr(op, fmt.Errorf("%d ids returned", n))
	}
	return id, nil
}

// Read appends the unexpired session's payload to dst[:0].
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := h.prepare(ctx, &h.read, "sb_s_read", h.sql.read, []uint32{oidInt8}); err != nil {
		return dst, false, err
	}
	binary.BigEndian.PutUint64(h.num[:], uint64(id))
	h.params[0] = h.num[:]
	ok := false
	collect := func(rr *pgconn.ResultReader) error {
		for rr.NextRow() {
			dst = append(dst, rr.Values()[0]...)
			ok = true
		}
		if _, err := rr.Close(); err != nil {
			return opErr("read", err)
		}
		return nil
	}
	var err error
	if h.d.KeepaliveOnRead && h.d.AsyncCommit {
		err = h.pipelined(ctx, h.read, h.params[:], binary1, h.payloadFmt, collect)
	} else {
		err = collect(h.c.pg.ExecStatement(ctx, h.read, h.params[:], binary1, h.payloadFmt))
	}
	h.params[0] = nil
	if err != nil {
		return dst[:0], false, err
	}
	return dst, ok, nil
}

// KeepAlive extends the sessions with one UPDATE … WHERE id = ANY($1).
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if err := h.prepare(ctx, &h.keep, "sb_s_keepalive", h.sql.keepalive, []uint32{oidInt8Array}); err != nil {
		return 0, err
	}
	h.arr = appendInt8Array(h.arr[:0], ids)
	h.params[0] = h.arr
	n, err := h.exec(ctx, h.keep, "keepalive")
	h.params[0] = nil
	return n, err
}

// appendInt8Array encodes ids as a one-dimensional int8[] in binary format.
func appendInt8Array(b []byte, ids []int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 1) // dimensions
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, oidInt8)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for _, id := range ids {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(id))
	}
	return b
}

// exec runs a write statement with h.params[:1] in binary and returns the
// rows it affected, pipelined in an asynchronous-commit transaction when the
// design says so.
func (h *sessionClient) exec(ctx context.Context, sd *pgconn.StatementDescription, op string) (int64, error) {
	if h.d.AsyncCommit {
		var n int64
		err := h.pipelined(ctx, sd, h.params[:1], binary1, nil, func(rr *pgconn.ResultReader) error {
			tag, err := rr.Close()
			n = tag.RowsAffected()
			if err != nil {
				return opErr(op, err)
			}
			return nil
		})
		return n, err
	}
	tag, err := h.c.pg.ExecStatement(ctx, sd, h.params[:1], binary1, nil).Close()
	if err != nil {
		return 0, opErr(op, err)
	}
	return tag.RowsAffected(), nil
}

// Reap deletes up to limit expired sessions (the corrected capped batch), or
// every expired one in one DELETE when limit is 0.
func (h *sessionClient) Reap(ctx context.Context, limit int) (int64, error) {
	if limit <= 0 {
		if err := h.prepare(ctx, &h.reapAll, "sb_s_reap_all", h.sql.reapAll, nil); err != nil {
			return 0, err
		}
		if h.d.AsyncCommit {
			var n int64
			err := h.pipelined(ctx, h.reapAll, nil, nil, nil, func(rr *pgconn.ResultReader) error {
				tag, err := rr.Close()
				n = tag.RowsAffected()
				if err != nil {
					return opErr("reap", err)
				}
				return nil
			})
			return n, err
		}
		tag, err := h.c.pg.ExecStatement(ctx, h.reapAll, nil, nil, nil).Close()
		if err != nil {
			return 0, opErr("reap", err)
		}
		return tag.RowsAffected(), nil
	}
	if err := h.prepare(ctx, &h.reapN, "sb_s_reap", h.sql.reapCapped, []uint32{oidInt8}); err != nil {
		return 0, err
	}
	binary.BigEndian.PutUint64(h.num[:], uint64(limit))
	h.params[0] = h.num[:]
	n, err := h.exec(ctx, h.reapN, "reap")
	h.params[0] = nil
	return n, err
}

// Observe reads the table's statistics, sizes, vacuum activity and the
// server's WAL counters, and counts expired rows still there (a scan of the
// table: the observation's own cost, on its own connection).
func (h *sessionClient) Observe(ctx context.Context) (store.SessionSample, error) {
	t := `"` + h.schema + `".` + SessionsTable
	var (
		live, dead, ins, upd, del, hot, autovac, vac, autoanalyze int64
		sinceAutovac                                              float64
		table, index, total, vacRunning                           int64
		walRecords, walFPI                                        int64
		walBytes                                                  float64
	)
	err := h.c.conn.QueryRow(ctx, `SELECT s.n_live_tup, s.n_dead_tup, s.n_tup_ins, s.n_tup_upd, s.n_tup_del, s.n_tup_hot_upd,
		s.autovacuum_count, s.vacuum_count, s.autoanalyze_count,
		coalesce(extract(epoch FROM now() - s.last_autovacuum), -1)::float8,
		pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
		(SELECT count(*) FROM pg_stat_progress_vacuum v WHERE v.relid = c.oid),
		w.wal_records, w.wal_fpi, w.wal_bytes::float8
	FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid, pg_stat_wal w
	WHERE c.oid = $1::regclass`, t).Scan(&live, &dead, &ins, &upd, &del, &hot, &autovac, &vac, &autoanalyze,
		&sinceAutovac, &table, &index, &total, &vacRunning, &walRecords, &walFPI, &walBytes)
	if err != nil {
		return store.SessionSample{}, opErr("observe sessions", err)
	}
	var rows, expired int64
	var oldest float64
	if err := h.c.conn.QueryRow(ctx, h.sql.count).Scan(&rows, &expired, &oldest); err != nil {
		return store.SessionSample{}, opErr("observe sessions: count", err)
	}
	return store.SessionSample{
		Rows: rows, Expired: expired, OldestExpired: time.Duration(oldest * float64(time.Second)), Bytes: total,
		Metrics: map[string]float64{
			"n_live_tup": float64(live), "n_dead_tup": float64(dead),
			"n_tup_ins": float64(ins), "n_tup_upd": float64(upd), "n_tup_del": float64(del), "n_tup_hot_upd": float64(hot),
			"autovacuum_count": float64(autovac), "vacuum_count": float64(vac), "autoanalyze_count": float64(autoanalyze),
			"seconds_since_autovacuum": sinceAutovac, "vacuum_running": float64(vacRunning),
			"table_bytes": float64(table), "index_bytes": float64(index), "total_bytes": float64(total),
			"wal_records": float64(walRecords), "wal_fpi": float64(walFPI), "wal_bytes": walBytes,
		},
	}, nil
}

// Describe reads the design back from the catalog: persistence, storage
// options, column types and constraints, indexes, the identity's cache, the
// function, and the server settings that matter.
func (h *sessionClient) Describe(ctx context.Context) (map[string]string, error) {
	t := `"` + h.schema + `".` + SessionsTable
	var persistence, reloptions, columns, indexes, function string
	var cache int64
	err := h.c.conn.QueryRow(ctx, `SELECT c.relpersistence::text, coalesce(array_to_string(c.reloptions, ', '), ''),
		(SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
			|| CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
			|| CASE a.attidentity WHEN 'a' THEN ' identity always' WHEN 'd' THEN ' identity by default' ELSE '' END, ', ' ORDER BY a.attnum)
			FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
		coalesce((SELECT string_agg(pg_get_indexdef(i.indexrelid), '; ' ORDER BY pg_get_indexdef(i.indexrelid)) FROM pg_index i WHERE i.indrelid = c.oid), ''),
		coalesce((SELECT q.seqcache FROM pg_sequence q WHERE q.seqrelid = pg_get_serial_sequence($1, 'id')::regclass), 0),
		coalesce((SELECT pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.pronamespace = c.relnamespace AND p.proname = 'new_session'), '')
	FROM pg_class c WHERE c.oid = $1::regclass`, t).Scan(&persistence, &reloptions, &columns, &indexes, &cache, &function)
	if err != nil {
		return nil, opErr("describe sessions", err)
	}
	out := map[string]string{
		"relpersistence": persistence,
		"reloptions":     reloptions,
		"columns":        columns,
		"indexes":        indexes,
		"identity_cache": strconv.FormatInt(cache, 10),
		"function":       function,
		"ddl":            strings.Join(h.sql.ddl, ";\n"),
		"create_sql":     h.createSQL(),
		"read_sql":       h.sql.read,
		"keepalive_sql":  h.sql.keepalive,
		"reap_sql":       h.sql.reapCapped,
		"reap_all_sql":   h.sql.reapAll,
	}
	for _, name := range []string{"autovacuum_max_workers", "autovacuum_naptime", "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_scale_factor", "autovacuum_vacuum_threshold", "synchronous_commit", "server_version"} {
		var v string
		if err := h.c.conn.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v); err != nil {
			return nil, opErr("describe sessions: "+name, err)
		}
		out[name] = v
	}
	return out, nil
}

// createSQL says how a create is sent.
func (h *sessionClient) createSQL() string {
	switch {
	case h.d.Function || !h.d.AsyncCommit:
		return h.sql.insert
	case h.d.TxForm == TxString:
		return "BEGIN; SET LOCAL synchronous_commit = off; " + fmt.Sprintf(h.sql.insertLit, "'<payload>'") + "; COMMIT (one string, one round trip)"
	case h.d.TxForm == TxPipeline:
		return "BEGIN; SET LOCAL synchronous_commit = off; " + h.sql.insert + "; COMMIT (pipelined, one round trip)"
	}
	return "BEGIN; SET LOCAL synchronous_commit = off; " + h.sql.insert + "; COMMIT (four round trips)"
}

// NaptimeFor is autovacuum_naptime shrunk by a time scale: the default one
// minute times scale, at least one second (its minimum).
func NaptimeFor(scale float64) time.Duration {
	return max(time.Second, time.Duration(math.Round(60*scale))*time.Second)
}

// ServerSettings returns autovacuum_max_workers (V14) and, for a time scale
// below 1, a shrunk autovacuum_naptime, where the server differs.
func (h *sessionClient) ServerSettings(ctx context.Context) (map[string]string, error) {
	want := map[string]string{}
	if n := h.d.AutovacuumMaxWorkers; n > 0 {
		want["autovacuum_max_workers"] = strconv.Itoa(n)
	}
	if h.d.TimeScale > 0 && h.d.TimeScale < 1 {
		want["autovacuum_naptime"] = strconv.Itoa(int(NaptimeFor(h.d.TimeScale)/time.Second)) + "s"
	}
	for name, v := range want {
		var have string
		if err := h.c.conn.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&have); err != nil {
			return nil, opErr("server settings: "+name, err)
		}
		if have == v {
			delete(want, name)
		}
	}
	return want, nil
}

// OpenReplicaSessions opens a session handle on a read replica of the
// store's server at url (only its host and port are used; user, database
// and options are the store's), to read the same schema.
func (s *Store) OpenReplicaSessions(ctx context.Context, url string, d store.SessionDesign) (store.SessionClient, error) {
	if err := CheckSessionDesign(d); err != nil {
		return nil, err
	}
	rc, err := parseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: replica URL %s: %w", store.SafeURL(url), err)
	}
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	cfg := s.pgcfg.Copy()
	cfg.Host, cfg.Port, cfg.Fallbacks = rc.Host, rc.Port, nil
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, errclass.WithClass(errclass.ClassUnavailable,
			fmt.Errorf("postgres: connect replica %s:%d: %s", rc.Host, rc.Port, connectReason(err, url)))
	}
	c := &Client{conn: conn, pg: conn.PgConn(), table: pgx.Identifier{s.cfg.Namespace, "kv"}}
	if err := s.waitReplay(ctx, conn); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c.sessions(d), nil
}

// ReplayTimeout bounds how long OpenReplicaSessions waits for a replica to
// catch up with its primary.
const ReplayTimeout = 30 * time.Second

// waitReplay waits until the replica on conn has replayed the primary's WAL
// up to where it is now, so that what the primary created (the sessions
// table) is visible there; a replica reconnects only some seconds after its
// primary restarted.
func (s *Store) waitReplay(ctx context.Context, conn *pgx.Conn) error {
	s.mu.Lock()
	var lsn string
	err := s.admin.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn)
	s.mu.Unlock()
	if err != nil {
		return opErr("replica: primary WAL position", err)
	}
	ctx, cancel := context.WithTimeout(ctx, ReplayTimeout)
	defer cancel()
	for {
		var done bool
		err := conn.QueryRow(ctx, `SELECT pg_is_in_recovery() AND coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, lsn).Scan(&done)
		switch {
		case err != nil:
			return opErr("replica: replay position", err)
		case done:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: the replica has not replayed the primary's WAL up to %s within %v (is it a standby of this server?): %w", lsn, ReplayTimeout, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Reconnect replaces the store's administrative connection, after its
// server restarted.
func (s *Store) Reconnect(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	conn, err := s.connect(ctx, false)
	if err != nil {
		return err
	}
	_ = s.admin.Close(context.WithoutCancel(ctx))
	s.admin = conn
	return nil
}

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"persistence", "id", "id_cache", "payload", "expires", "commit", "tx_form", "call", "expires_index",
		"reap", "keepalive", "skip_fresh", "fillfactor", "autovacuum", "autovacuum_max_workers", "constraints"}
}

// SessionArticleStore: the article's sessions experiments are PostgreSQL's
// (store.SessionArticle).
func (s *Store) SessionArticleStore() {}
