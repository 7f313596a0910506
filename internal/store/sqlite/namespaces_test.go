package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestNamespaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	// Someone else's table keeps the file from going with the last store.
	if _, err := rawDB(t, path).Exec(`CREATE TABLE someone_elses (x)`); err != nil {
		t.Fatal(err)
	}
	storetest.RunNamespaces(t, storetest.Namespaces{
		New: func(ctx context.Context, ns string) (store.Store, error) {
			return New(ctx, Config{Path: path, Namespace: ns})
		},
		List: func(ctx context.Context) ([]string, error) { return Namespaces(ctx, path) },
		Drop: func(ctx context.Context, ns string) error { return DropNamespace(ctx, path, ns) },
		Unmarked: func(t *testing.T, ns string) func(t *testing.T) {
			// A table named like a namespace's, not recorded in storebench_owned.
			db := rawDB(t, path)
			if _, err := db.Exec(`CREATE TABLE "` + ns + `_kv" (x)`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO "` + ns + `_kv" VALUES (42)`); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				var x int
				if err := rawDB(t, path).QueryRow(`SELECT x FROM "` + ns + `_kv"`).Scan(&x); err != nil || x != 42 {
					t.Errorf("unmarked table %s_kv: %d, %v", ns, x, err)
				}
			}
		},
	})
	none := filepath.Join(t.TempDir(), "none.db")
	if names, err := Namespaces(context.Background(), none); err != nil || len(names) != 0 {
		t.Errorf("Namespaces of a missing file = %v, %v; want none", names, err)
	}
	if _, err := os.Stat(none); err == nil {
		t.Errorf("listing made %s", none)
	}
}
