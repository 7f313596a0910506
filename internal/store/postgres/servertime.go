package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/store"
)

var _ store.ServerTimer = (*Store)(nil)

// serverTimeSQL sums pg_stat_statements over this store's statements: those
// of the current database whose text names the schema ($1 is `"<ns>".`, as
// every statement of the store and pgx's COPY write it). Statements are
// grouped by their first keyword; the admin connection's own statements
// (this one, SHOW, the ownership check) name the schema through a parameter
// or not at all, so they are not counted. Prepared statements are counted
// under their text, one call per execution, pipelined or not.
const serverTimeSQL = `SELECT lower(substring(ltrim(query) from '^[A-Za-z]+')) AS verb,
	sum(calls)::int8, sum(total_exec_time)::float8
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND strpos(query, $1) > 0
GROUP BY 1`

// serverTimeSource says what the figures cover.
const serverTimeSource = "pg_stat_statements total_exec_time: executor time of this store's statements only; parse, plan, commit (WAL flush) and protocol are outside it"

// verbOps names the statements' first keywords as operations; other
// statements on the schema (CREATE, TRUNCATE, DROP, COMMENT) are not ops.
// The one WITH statement is the hash-index design's set (an UPDATE, else an
// INSERT, in one round trip: a hash index cannot back ON CONFLICT).
var verbOps = map[string]string{"select": "get", "insert": "set", "with": "set", "delete": "delete", "copy": "load", "update": "update"}

// errNoStatements is the advice for a server without pg_stat_statements.
var errNoStatements = fmt.Errorf("%w: pg_stat_statements not installed (CREATE EXTENSION pg_stat_statements and shared_preload_libraries)", store.ErrNoServerTime)

// ServerTime reads pg_stat_statements on the store's admin connection (never
// a worker's): calls and total_exec_time of the store's statements, by
// operation, cumulative since the server started or pg_stat_statements_reset.
// Without the extension it returns an error wrapping store.ErrNoServerTime.
func (s *Store) ServerTime(ctx context.Context) (store.ServerTime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ServerTime{}, errClosed
	}
	ctx, cancel, err := store.SharedContext(ctx, adminTimeout)
	if err != nil {
		return store.ServerTime{}, opErr("server time", err)
	}
	defer cancel()
	rows, err := s.admin.Query(ctx, serverTimeSQL, s.schema+".")
	if err != nil {
		return store.ServerTime{}, s.serverTimeErr(ctx, err)
	}
	st := store.ServerTime{Source: serverTimeSource, Ops: map[string]store.OpTime{}}
	var (
		verb  *string
		calls int64
		ms    float64
	)
	_, err = pgx.ForEachRow(rows, []any{&verb, &calls, &ms}, func() error {
		if verb == nil {
			return nil
		}
		op, ok := verbOps[*verb]
		if !ok {
			return nil
		}
		t := st.Ops[op]
		t.Calls += calls
		t.Total += time.Duration(ms * float64(time.Millisecond))
		st.Ops[op] = t
		return nil
	})
	if err != nil {
		return store.ServerTime{}, s.serverTimeErr(ctx, err)
	}
	return st, nil
}

// serverTimeErr turns "no such view" and "library not loaded" into
// errNoStatements, with the one case the advice would not fix: the
// extension installed in a schema that is not on the search_path.
func (s *Store) serverTimeErr(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return opErr("server time", err)
	}
	switch pe.Code {
	case "42P01": // undefined_table: no extension in this database, or not on the search_path
		var schema string
		if e := s.admin.QueryRow(ctx, `SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_stat_statements'`).Scan(&schema); e == nil {
			return fmt.Errorf("%w: pg_stat_statements is installed in schema %s, which is not on the search_path", store.ErrNoServerTime, schema)
		}
		return errNoStatements
	case "55000": // object_not_in_prerequisite_state: "must be loaded via shared_preload_libraries"
		return errNoStatements
	}
	return opErr("server time", err)
}
