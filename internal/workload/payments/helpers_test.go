package payments

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/mysql"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/sqlite"
	"github.com/storebench/storebench/internal/store/storetest"
)

// Managed servers are shared by the package's tests, started on first use
// (a start costs seconds) and stopped by TestMain.
var servers struct {
	mu  sync.Mutex
	dir string
	m   map[string]*server.Server
}

func TestMain(m *testing.M) {
	code := m.Run()
	servers.mu.Lock()
	for name, s := range servers.m {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s: %v\n", name, err)
			code = max(code, 1)
		}
		cancel()
	}
	if servers.dir != "" {
		os.RemoveAll(servers.dir)
	}
	servers.mu.Unlock()
	os.Exit(code)
}

// managed returns the shared server of kind and profile. A missing binary
// fails the test with the install hint, as servertest.Start does.
func managed(t testing.TB, k server.Kind, profile string) *server.Server {
	t.Helper()
	servers.mu.Lock()
	defer servers.mu.Unlock()
	name := string(k) + ":" + profile
	if s := servers.m[name]; s != nil {
		return s
	}
	if _, err := server.Locate(k); err != nil {
		t.Fatalf("payments test: %v", err)
	}
	if servers.dir == "" {
		dir, err := os.MkdirTemp("", "storebench-payments-test-")
		if err != nil {
			t.Fatal(err)
		}
		// As root the server runs as an unprivileged account: let it in.
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
		servers.dir, servers.m = dir, map[string]*server.Server{}
	}
	opts := server.Options{Profile: profile, BaseDir: servers.dir}
	switch k {
	case server.MariaDB:
		opts.Settings = map[string]string{"innodb_lock_wait_timeout": "5"}
	case server.Postgres:
		// Deadlocks found in 0.1 s, not 1 s: the contention test provokes them.
		opts.Settings = map[string]string{"deadlock_timeout": "100ms"}
	}
	s, err := server.Start(context.Background(), k, opts)
	if err != nil {
		t.Fatalf("payments test: start %s: %v", name, err)
	}
	servers.m[name] = s
	return s
}

// engine is one store kind under test.
type engine struct {
	name    string
	profile string        // managed server profile ("" = default)
	busy    time.Duration // SQLite's busy_timeout (0: the store's default)
}

var engines = []engine{{name: "postgres"}, {name: "mariadb"}, {name: "sqlite"}}

// modes are the transaction modes e's store offers (Modes, from the kind's
// prototype): every one runs, so a mode offered by mistake fails.
func (e engine) modes() []string {
	k, ok := kinds.All().Lookup(e.name)
	if !ok {
		panic("no store kind " + e.name)
	}
	return Modes(k.Prototype)
}

// opened is a store with what a test needs to reach its data
// behind the store's back.
type opened struct {
	store.Store
	e    engine
	ns   string
	url  string // servers
	path string // SQLite
}

// open opens a fresh store of engine e (a new namespace on the shared
// server, or a new SQLite file), closed at the end of the test.
func open(t testing.TB, e engine) *opened {
	t.Helper()
	ctx := context.Background()
	tg := &opened{e: e, ns: storetest.Namespace(t)}
	var err error
	switch e.name {
	case "postgres":
		tg.url = managed(t, server.Postgres, e.profile).URL
		tg.Store, err = postgres.New(ctx, postgres.Config{URL: tg.url, Namespace: tg.ns})
	case "mariadb":
		tg.url = managed(t, server.MariaDB, e.profile).URL
		tg.Store, err = mysql.New(ctx, mysql.Config{URL: tg.url, Namespace: tg.ns})
	case "sqlite":
		tg.path = filepath.Join(t.TempDir(), "payments.db")
		tg.Store, err = sqlite.New(ctx, sqlite.Config{Path: tg.path, Namespace: tg.ns, BusyTimeout: e.busy})
	default:
		t.Fatalf("unknown engine %s", e.name)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.Close(context.Background()); err != nil {
			t.Errorf("close %s: %v", e.name, err)
		}
	})
	return tg
}

// table is the qualified name of one of the payments tables.
func (tg *opened) table(name string) string {
	switch tg.e.name {
	case "postgres":
		return `"` + tg.ns + `".` + name
	case "mariadb":
		return "`" + tg.ns + "`." + name
	}
	return `"` + tg.ns + `_` + name + `"`
}

// exec runs q over a connection of its own, behind the store's back.
func (tg *opened) exec(t testing.TB, q string) {
	t.Helper()
	ctx := context.Background()
	switch tg.e.name {
	case "postgres":
		conn, err := pgx.Connect(ctx, tg.url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	case "mariadb":
		u, err := url.Parse(tg.url)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", u.User.Username()+"@tcp("+u.Host+")/")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	case "sqlite":
		db, err := sql.Open("sqlite3", tg.path+"?_busy_timeout=5000")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// small are parameters for a test: a small data set, a short run.
func small() Params {
	p := DefaultParams()
	p.Accounts = 2000
	p.Orgs = 10
	p.Workers = 4
	p.Duration, p.Warmup = 0, 0
	p.Transfers = 400
	p.WarmupTransfers = 40
	p.StatsInterval = 200 * time.Millisecond
	p.SteadyWindow = 0
	return p
}
