package sqlite

// Sessions (the sessions workload): table "<namespace>_sessions"(id INTEGER
// PRIMARY KEY, payload, expires_at INTEGER) recorded in storebench_owned,
// expires_at in Unix milliseconds by this process's clock (SQLite runs in
// it). The knobs SQLite has: payload type (TEXT; BLOB for bytea; SQLite
// has no JSON column type), an index on expires_at, NOT NULL constraints;
// durability is the store's journal_mode and synchronous.
//
//	create     INSERT INTO t (payload, expires_at) VALUES (?, ?)
//	read       SELECT payload FROM t WHERE id = ? AND expires_at > ?, or
//	           UPDATE … RETURNING payload when the design keeps alive on read
//	keepalive  UPDATE t SET expires_at = ? WHERE id IN (SELECT value FROM
//	           json_each(?)) AND expires_at > ? [AND expires_at < ?]
//	reap       DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE
//	           expires_at < ? LIMIT ?), or one unbounded DELETE
//
// The store's Close drops only its kv table (sqlite.go): the sessions table
// stays in the database file until the namespace is reused.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/store"
)

var _ store.Sessions = (*Store)(nil)

type sessionClient struct {
	s     *Store
	conn  *sql.Conn
	d     store.SessionDesign
	table string // quoted
	name  string // unquoted, as recorded in storebench_owned
	ddl   []string

	create, read, keep, reapN, reapAll *sql.Stmt
	ids                                []byte // keepalive's JSON array
}

// OpenSessions opens a session handle on a pinned connection of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	if err := d.CheckTimes("sqlite", time.Millisecond, "at least 1 ms"); err != nil {
		return nil, err
	}
	conn, err := s.pin(ctx, "open sessions")
	if err != nil {
		return nil, err
	}
	h := &sessionClient{s: s, conn: conn, d: d, name: s.cfg.Namespace + "_sessions"}
	h.table = `"` + h.name + `"`
	ptype := "TEXT"
	if d.PayloadType == "bytea" {
		ptype = "BLOB"
	}
	notNull := ""
	if d.Constraints {
		notNull = " NOT NULL"
	}
	h.ddl = []string{`CREATE TABLE ` + h.table + ` (id INTEGER PRIMARY KEY, payload ` + ptype + notNull + `, expires_at INTEGER` + notNull + `)`}
	if d.ExpiresIndex {
		h.ddl = append(h.ddl, `CREATE INDEX "`+h.name+`_expires_at" ON `+h.table+` (expires_at)`)
	}
	return h, nil
}

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{ServerIDs: true, Resolution: time.Millisecond}
}

// Close closes the statements and returns the connection.
func (h *sessionClient) Close() error {
	for _, st := range []*sql.Stmt{h.create, h.read, h.keep, h.reapN, h.reapAll} {
		if st != nil {
			st.Close()
		}
	}
	if err := h.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("sqlite: close sessions: %w", err)
	}
	return nil
}

// Setup drops the sessions table of an earlier design (only when
// storebench_owned lists it) and creates this design's, in one transaction.
func (h *sessionClient) Setup(ctx context.Context) error {
	return inTx(ctx, h.conn, "sessions setup", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, ownedTableDDL); err != nil {
			return fmt.Errorf("sqlite: sessions setup: %w", err)
		}
		exists, owned, err := tableState(ctx, tx, h.name)
		if err != nil {
			return fmt.Errorf("sqlite: sessions setup: %w", err)
		}
		if exists && !owned {
			return fmt.Errorf("sqlite: table %s exists but is not recorded in storebench_owned: %w", h.table, store.ErrNotOwned)
		}
		stmts := append([]string{`DROP TABLE IF EXISTS ` + h.table}, h.ddl...)
		stmts = append(stmts, `INSERT OR REPLACE INTO storebench_owned (name, created_at) VALUES ('`+h.name+`', datetime('now'))`)
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: sessions setup: %s: %w", q, err)
			}
		}
		return nil
	})
}

func (h *sessionClient) prepare(ctx context.Context, st **sql.Stmt, q string) error {
	if *st != nil {
		return nil
	}
	var err error
	if *st, err = h.conn.PrepareContext(ctx, q); err != nil {
		return opErr("prepare sessions", err)
	}
	return nil
}

func (h *sessionClient) payloadArg(p []byte) any {
	if h.d.PayloadType == "bytea" {
		return store.NonNil(p)
	}
	return string(p)
}

// Create inserts a session and returns its rowid.
func (h *sessionClient) Create(ctx context.Context, _ int64, payload []byte) (int64, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr("create session", err)
	}
	if err := h.prepare(ctx, &h.create, `INSERT INTO `+h.table+` (payload, expires_at) VALUES (?, ?)`); err != nil {
		return 0, err
	}
	id, err := store.LastInsertID(h.create.ExecContext(ctx, h.payloadArg(payload), time.Now().Add(h.d.TTL).UnixMilli()))
	if err != nil {
		return 0, opErr("create session", err)
	}
	return id, nil
}

// Read returns the unexpired session's payload; with keepalive on read, an
// UPDATE … RETURNING extends it in the same statement.
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return dst, false, opErr("read session", err)
	}
	now := time.Now()
	var rows *sql.Rows
	switch {
	case h.d.KeepaliveOnRead && h.d.RefreshBelow > 0:
		if err := h.prepare(ctx, &h.read, `UPDATE `+h.table+` SET expires_at = CASE WHEN expires_at < ? THEN ? ELSE expires_at END
			WHERE id = ? AND expires_at > ? RETURNING payload`); err != nil {
			return dst, false, err
		}
		rows, err = h.read.QueryContext(ctx, now.Add(h.d.RefreshBelow).UnixMilli(), now.Add(h.d.TTL).UnixMilli(), id, now.UnixMilli())
	case h.d.KeepaliveOnRead:
		if err := h.prepare(ctx, &h.read, `UPDATE `+h.table+` SET expires_at = ? WHERE id = ? AND expires_at > ? RETURNING payload`); err != nil {
			return dst, false, err
		}
		rows, err = h.read.QueryContext(ctx, now.Add(h.d.TTL).UnixMilli(), id, now.UnixMilli())
	default:
		if err := h.prepare(ctx, &h.read, `SELECT payload FROM `+h.table+` WHERE id = ? AND expires_at > ?`); err != nil {
			return dst, false, err
		}
		rows, err = h.read.QueryContext(ctx, id, now.UnixMilli())
	}
	return readValue(rows, err, dst, "read session")
}

// KeepAlive extends the live sessions among ids in one UPDATE.
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr("keepalive", err)
	}
	q := `UPDATE ` + h.table + ` SET expires_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND expires_at > ?`
	if h.d.RefreshBelow > 0 {
		q += ` AND expires_at < ?`
	}
	if err := h.prepare(ctx, &h.keep, q); err != nil {
		return 0, err
	}
	h.ids = append(h.ids[:0], '[')
	for i, id := range ids {
		if i > 0 {
			h.ids = append(h.ids, ',')
		}
		h.ids = strconv.AppendInt(h.ids, id, 10)
	}
	h.ids = append(h.ids, ']')
	now := time.Now()
	args := []any{now.Add(h.d.TTL).UnixMilli(), string(h.ids), now.UnixMilli()}
	if h.d.RefreshBelow > 0 {
		args = append(args, now.Add(h.d.RefreshBelow).UnixMilli())
	}
	n, err := store.RowsAffected(h.keep.ExecContext(ctx, args...))
	if err != nil {
		return 0, opErr("keepalive", err)
	}
	return n, nil
}

// Reap deletes up to limit expired sessions through a rowid sub-select, or
// every expired one when limit is 0.
func (h *sessionClient) Reap(ctx context.Context, limit int) (int64, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr("reap", err)
	}
	now := time.Now().UnixMilli()
	var res sql.Result
	if limit <= 0 {
		if err := h.prepare(ctx, &h.reapAll, `DELETE FROM `+h.table+` WHERE expires_at < ?`); err != nil {
			return 0, err
		}
		res, err = h.reapAll.ExecContext(ctx, now)
	} else {
		if err := h.prepare(ctx, &h.reapN, `DELETE FROM `+h.table+` WHERE rowid IN (SELECT rowid FROM `+h.table+` WHERE expires_at < ? LIMIT ?)`); err != nil {
			return 0, err
		}
		res, err = h.reapN.ExecContext(ctx, now, limit)
	}
	n, err := store.RowsAffected(res, err)
	if err != nil {
		return 0, opErr("reap", err)
	}
	return n, nil
}

// Observe counts the rows, the expired ones and the oldest expiry, and
// reads the file's page counts.
func (h *sessionClient) Observe(ctx context.Context) (store.SessionSample, error) {
	now := time.Now().UnixMilli()
	var rows, expired, oldest int64
	err := h.conn.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(expires_at <= ?), 0),
		coalesce(? - min(CASE WHEN expires_at <= ? THEN expires_at END), 0) FROM `+h.table, now, now, now).Scan(&rows, &expired, &oldest)
	if err != nil {
		return store.SessionSample{}, opErr("observe sessions", err)
	}
	m := map[string]float64{}
	for _, p := range []string{"page_count", "freelist_count", "page_size"} {
		var v int64
		if err := h.conn.QueryRowContext(ctx, `PRAGMA `+p).Scan(&v); err != nil {
			return store.SessionSample{}, opErr("observe sessions: PRAGMA "+p, err)
		}
		m[p] = float64(v)
	}
	m["rows"], m["expired_rows"] = float64(rows), float64(expired)
	return store.SessionSample{Rows: rows, Expired: expired, OldestExpired: time.Duration(oldest) * time.Millisecond,
		Bytes: int64(m["page_count"] * m["page_size"]), Metrics: m}, nil
}

// Describe reads the table's DDL back from sqlite_schema and the PRAGMAs
// that decide durability.
func (h *sessionClient) Describe(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	rows, err := h.conn.QueryContext(ctx, `SELECT type, name, coalesce(sql, '') FROM sqlite_schema WHERE tbl_name = ? ORDER BY type DESC, name`, h.name)
	if err != nil {
		return nil, opErr("describe sessions", err)
	}
	var schema []string
	for rows.Next() {
		var typ, name, ddl string
		if err := rows.Scan(&typ, &name, &ddl); err != nil {
			rows.Close()
			return nil, opErr("describe sessions", err)
		}
		if typ == "index" && ddl != "" {
			out["indexes"] = strings.TrimPrefix(out["indexes"]+"; "+ddl, "; ")
		}
		schema = append(schema, ddl)
	}
	if err := rows.Close(); err != nil {
		return nil, opErr("describe sessions", err)
	}
	out["ddl"] = strings.Join(schema, ";\n")
	for _, p := range []string{"journal_mode", "synchronous"} {
		var v string
		if err := h.conn.QueryRowContext(ctx, `PRAGMA `+p).Scan(&v); err != nil {
			return nil, opErr("describe sessions: PRAGMA "+p, err)
		}
		out[p] = v
	}
	out["synchronous"] = syncName(out["synchronous"])
	out["reap"] = "DELETE … WHERE rowid IN (SELECT rowid … WHERE expires_at < now LIMIT n)"
	return out, nil
}

// ServerSettings asks for nothing: there is no server.
func (h *sessionClient) ServerSettings(context.Context) (map[string]string, error) { return nil, nil }

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"payload", "expires_index", "reap", "keepalive", "skip_fresh", "constraints"}
}
