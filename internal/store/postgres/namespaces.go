package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/store"
)

// What a run leaves behind when it cannot close its store (it was killed)
// or keeps its data on purpose (run --keep): its schema, marked with the
// Marker comment. storebench clean lists and drops such schemas; it never
// touches a schema without the marker.

var _ store.Detacher = (*Store)(nil)

// Detach disconnects and leaves the schema and its tables in place.
func (s *Store) Detach(ctx context.Context) error { return s.ns.Detach(ctx) }

// Namespaces lists the schemas of the database at url that carry the
// Marker comment, by name.
func Namespaces(ctx context.Context, url string) ([]string, error) {
	s, err := adminStore(ctx, Config{URL: url, Namespace: store.ListNamespace})
	if err != nil {
		return nil, err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	rows, err := s.admin.Query(ctx, `SELECT nspname FROM pg_namespace WHERE obj_description(oid, 'pg_namespace') = $1 ORDER BY nspname`, Marker)
	if err != nil {
		return nil, opErr("list schemas", err)
	}
	names, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	if err != nil {
		return nil, opErr("list schemas", err)
	}
	return names, nil
}

// DropNamespace drops schema ns of the database at url with everything in
// it, only if it carries the Marker comment (store.ErrNotOwned otherwise).
// A schema that is not there is not an error: nothing is left to drop.
func DropNamespace(ctx context.Context, url, ns string) error {
	s, err := adminStore(ctx, Config{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	return s.ns.Drop(ctx)
}

// Dependents returns a *store.DependentsError when objects outside schema
// ns of the database at url depend on objects in it (DropNamespace would
// leave it), nil when none do.
func Dependents(ctx context.Context, url, ns string) error {
	s, err := adminStore(ctx, Config{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	return s.dependents(ctx, s.admin)
}

// dependentsSQL lists, kind and name each, the objects outside schema $1
// that DROP SCHEMA ... CASCADE would drop with it. Inside are the schema's
// members and, recursively, what goes with them (auto, internal and
// extension dependencies: indexes, constraints, row types, owned sequences,
// a view's rewrite rule); a dependent outside is any other object with a
// normal (or partition) dependency on one of them: a view or materialized
// view (through its rewrite rule, named here by its relation), a foreign
// key, a column default, a function taking a row type of ours.
const dependentsSQL = `WITH RECURSIVE inside(classid, objid) AS (
		SELECT 'pg_namespace'::regclass, oid FROM pg_namespace WHERE nspname = $1
	UNION
		SELECT d.classid, d.objid FROM pg_depend d JOIN inside i ON d.refclassid = i.classid AND d.refobjid = i.objid
		WHERE d.deptype IN ('a', 'i', 'e') OR (d.deptype = 'n' AND i.classid = 'pg_namespace'::regclass)
)
SELECT DISTINCT coalesce(r.type, o.type) || ' ' || coalesce(r.identity, o.identity)
FROM pg_depend d
JOIN inside i ON d.refclassid = i.classid AND d.refobjid = i.objid
CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, 0) o
LEFT JOIN pg_rewrite w ON d.classid = 'pg_rewrite'::regclass AND w.oid = d.objid
LEFT JOIN LATERAL pg_identify_object('pg_class'::regclass, w.ev_class, 0) r ON w.oid IS NOT NULL
WHERE d.deptype NOT IN ('a', 'i', 'e', 'x')
	AND NOT EXISTS (SELECT 1 FROM inside j WHERE j.classid = d.classid AND j.objid = d.objid)
ORDER BY 1`

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// dependents is Dependents on q.
func (s *Store) dependents(ctx context.Context, q querier) error {
	rows, err := q.Query(ctx, dependentsSQL, s.cfg.Namespace)
	if err != nil {
		return opErr("list dependents", err)
	}
	deps, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	if err != nil {
		return opErr("list dependents", err)
	}
	if len(deps) == 0 {
		return nil
	}
	return &store.DependentsError{Name: "postgres", What: "schema " + s.schema, Dependents: deps,
		Hint: "to remove it with them, review them and run by hand: DROP SCHEMA " + s.schema + " CASCADE"}
}

// membersSQL lists the schema's own objects that a DROP names, kind and
// identity each: its members, but for those that go with another (an
// identity or owned sequence, an extension's objects).
const membersSQL = `SELECT o.type, o.identity
FROM pg_depend d CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, 0) o
WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND d.deptype = 'n'
	AND NOT EXISTS (SELECT 1 FROM pg_depend a WHERE a.classid = d.classid AND a.objid = d.objid AND a.deptype IN ('a', 'i', 'e'))
ORDER BY 1, 2`

// dropKinds are the kinds of member dropSchema drops, in the order that
// needs no retry for what runs make (views and functions before the tables
// they read, tables before the sequences and types they use). A DROP names
// many objects of one kind at once, so that their dependencies on each
// other (foreign keys) need no order.
var dropKinds = []string{"view", "materialized view", "function", "procedure", "aggregate", "table", "foreign table", "sequence", "type", "extension"}

// dropSchema drops the schema with everything in it and nothing outside
// it, in one transaction: never DROP SCHEMA ... CASCADE, which would go on
// into a user's view on a kept table. It lists the dependents outside
// first (a *store.DependentsError, nothing dropped); then every member is
// dropped with RESTRICT, kind by kind, and the schema last, so a dependent
// made after the check makes the drop fail rather than cascade to it.
func (s *Store) dropSchema(ctx context.Context) error {
	err := s.dropSchemaTx(ctx)
	if _, ok := errors.AsType[*store.DependentsError](err); ok || err == nil {
		return err
	}
	return opErr("drop schema", err)
}

func (s *Store) dropSchemaTx(ctx context.Context) error {
	tx, err := s.admin.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := s.dependents(ctx, tx); err != nil {
		return err
	}
	if err := s.dropMembers(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// dropMembers drops, in tx, every member of the schema with RESTRICT and
// then the schema: what depends on them from outside makes it fail.
func (s *Store) dropMembers(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, membersSQL, s.cfg.Namespace)
	if err != nil {
		return err
	}
	byKind := map[string][]string{}
	var kind, identity string
	_, err = pgx.ForEachRow(rows, []any{&kind, &identity}, func() error {
		if !slices.Contains(dropKinds, kind) {
			return fmt.Errorf("schema %s holds %s %s, which storebench does not drop; review it and run by hand: DROP SCHEMA %s CASCADE", s.schema, kind, identity, s.schema)
		}
		byKind[kind] = append(byKind[kind], identity)
		return nil
	})
	if err != nil {
		return err
	}
	var drops []string
	for _, k := range dropKinds {
		if ids := byKind[k]; len(ids) > 0 {
			drops = append(drops, `DROP `+strings.ToUpper(k)+` `+strings.Join(ids, ", ")+` RESTRICT`)
		}
	}
	// What one member of the schema needs of another of a later kind (a
	// table's default calling a function of ours) waits for a later pass.
	for len(drops) > 0 {
		var blocked []string
		var lastErr error
		for _, q := range drops {
			if err := execSavepoint(ctx, tx, q); err != nil {
				if pe, ok := errors.AsType[*pgconn.PgError](err); !ok || pe.Code != "2BP01" /* dependent_objects_still_exist */ {
					return err
				}
				blocked, lastErr = append(blocked, q), err
			}
		}
		if len(blocked) == len(drops) {
			// A dependent outside made since the check, or a cycle between
			// kinds: the error says which, and nothing is dropped.
			if err := s.dependents(ctx, tx); err != nil {
				return err
			}
			return lastErr
		}
		drops = blocked
	}
	_, err = tx.Exec(ctx, `DROP SCHEMA `+s.schema+` RESTRICT`)
	return err
}

// execSavepoint runs q in a savepoint of tx: a failure rolls back q alone.
func execSavepoint(ctx context.Context, tx pgx.Tx, q string) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, q); err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}
