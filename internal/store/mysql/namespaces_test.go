package mysql

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestNamespaces(t *testing.T) {
	url := serverURL(t)
	storetest.RunNamespaces(t, storetest.Namespaces{
		New: func(ctx context.Context, ns string) (store.Store, error) {
			return New(ctx, Config{URL: url, Namespace: ns})
		},
		List: func(ctx context.Context) ([]string, error) { return Namespaces(ctx, url) },
		Drop: func(ctx context.Context, ns string) error { return DropNamespace(ctx, url, ns) },
		Unmarked: func(t *testing.T, ns string) func(t *testing.T) {
			db := foreign(t, url)
			// Named like a namespace, with an owner table of that name, but
			// holding someone else's row.
			exec(t, db, "CREATE DATABASE `"+ns+"`")
			t.Cleanup(func() { exec(t, foreign(t, url), "DROP DATABASE IF EXISTS `"+ns+"`") })
			exec(t, db, "CREATE TABLE `"+ns+"`."+OwnerTable+" (owner CHAR(32))")
			exec(t, db, "INSERT INTO `"+ns+"`."+OwnerTable+" VALUES ('billing')")
			return func(t *testing.T) {
				if n := count(t, foreign(t, url), "SELECT COUNT(*) FROM `"+ns+"`."+OwnerTable+" WHERE owner = 'billing'"); n != 1 {
					t.Errorf("unmarked database %s: %d owner rows, want 1", ns, n)
				}
			}
		},
	})
}
