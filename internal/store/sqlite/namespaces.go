package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/paycheck"
)

// What a run leaves behind when it cannot close its store (it was killed)
// or keeps its data on purpose (run --keep): its tables "<namespace>_kv",
// "<namespace>_sessions", "<namespace>_usertable" and the payments tables, each recorded in
// storebench_owned. storebench clean lists and drops them; it never touches
// a table that storebench_owned does not list.

var _ store.Detacher = (*Store)(nil)

// Detach closes the database and leaves the tables in place. Detaching
// twice is not an error.
func (s *Store) Detach(context.Context) error {
	return store.EndOnce(&s.mu, &s.closed, func() error {
		if err := s.db.Close(); err != nil {
			return fmt.Errorf("sqlite: close: %w", err)
		}
		return nil
	})
}

// tableSuffixes are what follows "<namespace>_" in the names of the tables
// a store makes.
var tableSuffixes = append([]string{"kv", "sessions", recordsSuffix}, paycheck.Tables...)

// openExisting opens the database file at path without creating it; nil
// when there is no such file.
func openExisting(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_busy_timeout=5000&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// ownedNames are the names storebench_owned lists; none when it is missing.
func ownedNames(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM storebench_owned`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil
		}
		return nil, err
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names[n] = true
	}
	return names, rows.Err()
}

// Namespaces lists the namespaces whose tables storebench_owned lists in
// the database file at path.
func Namespaces(ctx context.Context, path string) ([]string, error) {
	db, err := openExisting(path)
	if db == nil {
		return nil, err
	}
	defer db.Close()
	owned, err := ownedNames(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces in %s: %w", path, err)
	}
	seen := map[string]bool{}
	for name := range owned {
		for _, suffix := range tableSuffixes {
			if ns, ok := strings.CutSuffix(name, "_"+suffix); ok && store.ValidNamespace(ns) == nil {
				seen[ns] = true
			}
		}
	}
	return store.SortedNames(seen), nil
}

// DropNamespace drops the tables of namespace ns in the database file at
// path, and their rows in storebench_owned (the table too once empty), in
// one transaction. A table of the namespace's names that storebench_owned
// does not list is not storebench's: then nothing is dropped
// (store.ErrNotOwned).
func DropNamespace(ctx context.Context, path, ns string) error {
	if err := store.ValidNamespace(ns); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	db, err := openExisting(path)
	if db == nil {
		return err
	}
	defer db.Close()
	fail := func(err error) error { return fmt.Errorf("sqlite: drop namespace %s in %s: %w", ns, path, err) }
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	owned, err := ownedNames(ctx, tx)
	if err != nil {
		return fail(err)
	}
	var drop []string
	for _, suffix := range tableSuffixes {
		name := ns + "_" + suffix
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?)`, name).Scan(&exists); err != nil {
			return fail(err)
		}
		switch {
		case exists && !owned[name]:
			return fail(fmt.Errorf("table %s is not recorded in storebench_owned: %w", name, store.ErrNotOwned))
		case owned[name]:
			drop = append(drop, name)
		}
	}
	for _, name := range drop {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS "`+name+`"`); err != nil {
			return fail(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM storebench_owned WHERE name = ?`, name); err != nil {
			return fail(err)
		}
		delete(owned, name)
	}
	if len(drop) > 0 && len(owned) == 0 {
		if _, err := tx.ExecContext(ctx, `DROP TABLE storebench_owned`); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}
