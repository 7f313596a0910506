package mysql

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
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

// TestDropLeavesDependents: a kept database that objects in other
// databases depend on, a view reading its table and a foreign key to it,
// is listed with them and left, by DropNamespace and by a live store's
// Close alike: DROP DATABASE would have left the view broken and stopped
// at the foreign key halfway, after dropping the marker table.
func TestDropLeavesDependents(t *testing.T) {
	url := serverURL(t)
	ctx := context.Background()
	db := foreign(t, url)
	kept := storetest.Kept(t, func(ctx context.Context, ns string) (store.Store, error) {
		return New(ctx, Config{URL: url, Namespace: ns})
	})
	app := storetest.Namespace(t) // the user's own database
	exec(t, db, "CREATE DATABASE `"+app+"`")
	t.Cleanup(func() { exec(t, foreign(t, url), "DROP DATABASE IF EXISTS `"+app+"`") })
	for _, q := range []string{
		"CREATE VIEW `" + kept + "`.inner_v AS SELECT k FROM `" + kept + "`.kv", // inside: goes with it
		"INSERT INTO `" + kept + "`.kv VALUES ('k', 'v', NULL)",
		"CREATE VIEW `" + app + "`.dep_v AS SELECT k FROM `" + kept + "`.kv",
		"CREATE TABLE `" + app + "`.dep_ref (k VARBINARY(" + strconv.Itoa(MaxKeyLen) + "), CONSTRAINT dep_fk FOREIGN KEY (k) REFERENCES `" + kept + "`.kv (k)) ENGINE=InnoDB",
	} {
		exec(t, db, q)
	}
	want := []string{"foreign key dep_fk on " + app + ".dep_ref", "view " + app + ".dep_v"}
	for name, err := range map[string]error{"Dependents": Dependents(ctx, url, kept), "DropNamespace": DropNamespace(ctx, url, kept)} {
		de, ok := errors.AsType[*store.DependentsError](err)
		if !ok || !slices.Equal(de.Dependents, want) || !strings.Contains(err.Error(), "DROP DATABASE `"+kept+"`") {
			t.Fatalf("%s: %v, want a *store.DependentsError naming %q", name, err, want)
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM `"+app+"`.dep_v"); n != 1 {
		t.Errorf("the user's view after DropNamespace: %d rows, want 1", n)
	}
	if names, err := Namespaces(ctx, url); err != nil || !slices.Contains(names, kept) {
		t.Fatalf("the database after DropNamespace: %v, %v", names, err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM `"+kept+"`.inner_v"); n != 1 {
		t.Errorf("the kept database's own view after DropNamespace: %d rows, want 1", n)
	}

	// A live run's Close leaves its database the same way.
	live := storetest.Namespace(t)
	ls, err := New(ctx, Config{URL: url, Namespace: live})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, db, "CREATE VIEW `"+app+"`.dep_live AS SELECT * FROM `"+live+"`.kv")
	if _, ok := errors.AsType[*store.DependentsError](ls.Close(ctx)); !ok {
		t.Errorf("Close with a view outside on its table: not a *store.DependentsError")
	}
	count(t, db, "SELECT COUNT(*) FROM `"+app+"`.dep_live")
	exec(t, db, "DROP VIEW `"+app+"`.dep_live")
	if err := DropNamespace(ctx, url, live); err != nil {
		t.Fatal(err)
	}

	exec(t, db, "DROP VIEW `"+app+"`.dep_v")
	exec(t, db, "DROP TABLE `"+app+"`.dep_ref")
	if err := DropNamespace(ctx, url, kept); err != nil {
		t.Fatal(err)
	}
	if databaseExists(t, db, kept) || !databaseExists(t, db, app) {
		t.Errorf("after the drop: %s exists %v, %s exists %v", kept, databaseExists(t, db, kept), app, databaseExists(t, db, app))
	}
}
