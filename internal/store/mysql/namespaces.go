package mysql

import (
	"context"

	"github.com/storebench/storebench/internal/store"
)

// What a run leaves behind when it cannot close its store (it was killed)
// or keeps its data on purpose (run --keep): its database, marked by table
// storebench_owner. storebench clean lists and drops such databases; it
// never touches one without the marker.

var _ store.Detacher = (*Store)(nil)

// Detach disconnects and leaves the database and its tables in place.
func (s *Store) Detach(ctx context.Context) error { return s.ns.Detach(ctx) }

// Namespaces lists the databases of the server at url that carry the
// marker, by name.
func Namespaces(ctx context.Context, url string) ([]string, error) {
	s, err := adminStore(ctx, Config{URL: url, Namespace: store.ListNamespace})
	if err != nil {
		return nil, err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	rows, err := s.admin.QueryContext(ctx, `SELECT TABLE_SCHEMA FROM information_schema.TABLES WHERE TABLE_NAME = '`+OwnerTable+`' ORDER BY TABLE_SCHEMA`)
	if err != nil {
		return nil, opErr("list databases", err)
	}
	var candidates []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, opErr("list databases", err)
		}
		// Only a name storebench could have made goes into the query below.
		if store.ValidNamespace(n) == nil {
			candidates = append(candidates, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, opErr("list databases", err)
	}
	var names []string
	for _, n := range candidates {
		_, owned, err := ownedDB(ctx, s.admin, n)
		if err != nil {
			return nil, err
		}
		if owned {
			names = append(names, n)
		}
	}
	return names, nil
}

// DropNamespace drops database ns of the server at url with everything in
// it, only if it carries the marker (store.ErrNotOwned otherwise). A
// database that is not there is not an error: nothing is left to drop.
func DropNamespace(ctx context.Context, url, ns string) error {
	s, err := adminStore(ctx, Config{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	return s.ns.Drop(ctx)
}

// Dependents returns a *store.DependentsError when objects in other
// databases of the server at url depend on database ns (DropNamespace
// would leave it), nil when none do.
func Dependents(ctx context.Context, url, ns string) error {
	s, err := adminStore(ctx, Config{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	defer s.Detach(context.WithoutCancel(ctx))
	return s.dependents(ctx)
}

// dependentsSQL lists the objects in other databases that depend on
// database ? (twice): views that read its tables (the server keeps a view's
// definition with every table qualified and quoted, `db`.`table`; MariaDB
// has no VIEW_TABLE_USAGE) and foreign keys that refer to them. DROP
// DATABASE removes neither: it would leave the views broken, and a foreign
// key stops it halfway, after the tables it reached first.
const dependentsSQL = `SELECT CONCAT('view ', TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.VIEWS
	WHERE TABLE_SCHEMA <> ? AND LOCATE(CONCAT('` + "`" + `', ?, '` + "`" + `.'), VIEW_DEFINITION) > 0
UNION ALL
SELECT CONCAT('foreign key ', CONSTRAINT_NAME, ' on ', CONSTRAINT_SCHEMA, '.', TABLE_NAME) FROM information_schema.REFERENTIAL_CONSTRAINTS
	WHERE UNIQUE_CONSTRAINT_SCHEMA = ? AND CONSTRAINT_SCHEMA <> ?
ORDER BY 1`

// dependents is Dependents on the store's connection.
func (s *Store) dependents(ctx context.Context) error {
	ns := s.cfg.Namespace
	rows, err := s.admin.QueryContext(ctx, dependentsSQL, ns, ns, ns, ns)
	if err != nil {
		return opErr("list dependents", err)
	}
	defer rows.Close()
	var deps []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return opErr("list dependents", err)
		}
		deps = append(deps, d)
	}
	if err := rows.Err(); err != nil {
		return opErr("list dependents", err)
	}
	if len(deps) == 0 {
		return nil
	}
	return &store.DependentsError{Name: "mysql", What: "database " + s.db, Dependents: deps,
		Hint: "to remove it, drop or change them first (DROP DATABASE would leave such views broken and stops halfway at such a foreign key), then run: DROP DATABASE " + s.db}
}

// dropDatabase drops the database unless objects in other databases
// depend on it (a *store.DependentsError, nothing dropped).
func (s *Store) dropDatabase(ctx context.Context) error {
	if err := s.dependents(ctx); err != nil {
		return err
	}
	if _, err := s.admin.ExecContext(ctx, `DROP DATABASE `+s.db); err != nil {
		return opErr("drop database", err)
	}
	return nil
}
