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
