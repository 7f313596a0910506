package postgres

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestNamespaces(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	storetest.RunNamespaces(t, storetest.Namespaces{
		New: func(ctx context.Context, ns string) (store.Store, error) {
			return New(ctx, Config{URL: url, Namespace: ns})
		},
		List: func(ctx context.Context) ([]string, error) { return Namespaces(ctx, url) },
		Drop: func(ctx context.Context, ns string) error { return DropNamespace(ctx, url, ns) },
		Unmarked: func(t *testing.T, ns string) func(t *testing.T) {
			conn := sql(t, url)
			// Named like a namespace, with a table and a comment, but not storebench's.
			exec(t, conn, `CREATE SCHEMA `+ns)
			exec(t, conn, `COMMENT ON SCHEMA `+ns+` IS 'storebench? no: the billing team'`)
			exec(t, conn, `CREATE TABLE `+ns+`.kv (x int)`)
			exec(t, conn, `INSERT INTO `+ns+`.kv VALUES (42)`)
			return func(t *testing.T) {
				var x int
				if err := sql(t, url).QueryRow(context.Background(), `SELECT x FROM `+ns+`.kv`).Scan(&x); err != nil || x != 42 {
					t.Errorf("unmarked schema %s: %d, %v", ns, x, err)
				}
			}
		},
	})
}
