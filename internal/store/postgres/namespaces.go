package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

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
