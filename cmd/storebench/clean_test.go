package main

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// pgQuery runs one query on a connection of its own and scans one row.
func pgQuery(t *testing.T, url, q string, dst ...any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if len(dst) == 0 {
		_, err = conn.Exec(ctx, q)
		return err
	}
	return conn.QueryRow(ctx, q).Scan(dst...)
}

// markedSchemas are the schemas storebench's comment marks.
func markedSchemas(t *testing.T, url string) []string {
	t.Helper()
	var names []string
	if err := pgQuery(t, url, `SELECT coalesce(array_agg(nspname ORDER BY nspname), '{}') FROM pg_namespace WHERE obj_description(oid, 'pg_namespace') = 'storebench'`, &names); err != nil {
		t.Fatal(err)
	}
	return names
}

func withPassword(url, password string) string {
	return strings.Replace(url, "@", ":"+password+"@", 1)
}

func mustExit(t *testing.T, r runOut, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Fatalf("password printed:\n%s%s", r.stdout, r.stderr)
	}
}

// TestCleanAfterSIGKILL is the case: a run killed with SIGKILL
// leaves its scratch dir and, on a server named by URL, its schema. While
// the run runs, clean leaves them alone; once it is gone, the next run says
// so in one line, clean --dry-run lists them, and clean removes them and
// nothing that lacks storebench's mark.
func TestCleanAfterSIGKILL(t *testing.T) {
	pg := servertest.Start(t, server.Postgres, server.Options{}).URL
	pgURL := withPassword(pg, "hunter2") // trust auth: accepted, and never to be printed
	data := servertest.BaseDir(t)
	out := t.TempDir()
	// Named like storebench's, without its marks: never to be touched.
	const foreignSchema = "sb_20200101t000000_abcdef"
	if err := pgQuery(t, pg, `CREATE SCHEMA `+foreignSchema+`; CREATE TABLE `+foreignSchema+`.kv (x int)`); err != nil {
		t.Fatal(err)
	}
	foreignDir := filepath.Join(data, "storebench-postgres-old")
	if err := os.Mkdir(foreignDir, 0o755); err != nil {
		t.Fatal(err)
	}

	run := testkit.Start(t, exec.Command(testkit.Binary(t), "run", "kv", "--stores", pgURL, "--keys", "5M", "--data-dir", data, "--out", out, "--quiet"))
	var ns string
	testkit.Eventually(t, 60*time.Second, 50*time.Millisecond, "the run's schema", func() bool {
		if names := markedSchemas(t, pg); len(names) == 1 {
			ns = names[0]
		}
		return ns != ""
	})
	scratch, _ := filepath.Glob(filepath.Join(data, "storebench-run-*"))
	if len(scratch) != 1 {
		t.Fatalf("scratch dirs: %v, want one", scratch)
	}

	// The run is running: its schema and dir are its own.
	r := storebench(t, nil, "clean", "--data-dir", data, "--stores", pgURL)
	mustExit(t, r, 0)
	if !strings.Contains(r.stdout, "left alone    schema "+ns) || !strings.Contains(r.stdout, "its run is running") {
		t.Errorf("clean during the run:\n%s", r.stdout)
	}
	if names := markedSchemas(t, pg); len(names) != 1 {
		t.Fatalf("clean removed a live run's schema: %v", names)
	}
	if _, err := os.Stat(scratch[0]); err != nil {
		t.Fatalf("clean removed a live run's dir: %v", err)
	}

	run.Signal(t, syscall.SIGKILL)
	run.WaitExit(t, 10*time.Second)

	r = storebench(t, nil, "clean", "--dry-run", "--data-dir", data, "--stores", pgURL)
	mustExit(t, r, 0)
	// (Exact counts would count what other runs on this machine left in /tmp.)
	for _, want := range []string{"would remove  schema " + ns + " at postgres://", "would remove  run scratch dir " + scratch[0], "left alone    " + foreignDir} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run: no %q in\n%s", want, r.stdout)
		}
	}
	if names := markedSchemas(t, pg); len(names) != 1 {
		t.Fatalf("the dry run removed the schema: %v", names)
	}

	// The next run against that server reports what the dead one left.
	r = storebench(t, nil, "run", "kv", "--stores", pgURL, "--keys", "10", "--data-dir", data, "--out", t.TempDir())
	mustExit(t, r, 0)
	var report []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "no longer run") {
			report = append(report, line)
		}
	}
	if len(report) != 1 || !strings.Contains(report[0], " dirs (") || !strings.Contains(report[0], "1 namespaces at postgres://") ||
		!strings.Contains(report[0], "storebench clean --dry-run --data-dir "+data+" --stores postgres://") {
		t.Errorf("the next run's report of leftovers: %q\nstderr: %s", report, r.stderr)
	}

	r = storebench(t, nil, "clean", "--data-dir", data, "--stores", pgURL)
	mustExit(t, r, 0)
	if !strings.Contains(r.stdout, "removed       schema "+ns) || !strings.Contains(r.stdout, "removed       run scratch dir "+scratch[0]) {
		t.Errorf("clean:\n%s", r.stdout)
	}
	if names := markedSchemas(t, pg); len(names) != 0 {
		t.Errorf("schemas left after clean: %v", names)
	}
	if _, err := os.Stat(scratch[0]); err == nil {
		t.Errorf("%s left after clean", scratch[0])
	}
	var n int
	if err := pgQuery(t, pg, `SELECT count(*) FROM `+foreignSchema+`.kv`, &n); err != nil {
		t.Errorf("unmarked schema %s: %v", foreignSchema, err)
	}
	if _, err := os.Stat(foreignDir); err != nil {
		t.Errorf("unmarked dir: %v", err)
	}
}

// TestKeepThenClean: --keep leaves each URL target's data for the user's
// own queries, records where, and clean removes it later; keys and
// databases without storebench's mark stay.
func TestKeepThenClean(t *testing.T) {
	rd := servertest.Start(t, server.Redis, server.Options{}).URL
	my := servertest.Start(t, server.MariaDB, server.Options{}).URL
	out := t.TempDir()
	ctx := context.Background()

	opt, err := rueidis.ParseURL(rd)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	foreignKeys := []string{"storebench", "sb:x:1", "session:42"}
	for _, k := range foreignKeys {
		if err := rc.Do(ctx, rc.B().Set().Key(k).Value("theirs").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(my)
	db, err := sql.Open("mysql", "root@tcp("+u.Host+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	_, res := runResult(t, out, "run", "kv", "--stores", rd+","+my, "--keys", "100", "--keep", "--out", out, "--quiet")
	if len(res.Targets) != 2 {
		t.Fatalf("targets: %+v", res.Targets)
	}
	ns := res.Targets[0].Namespace
	keys, err := rc.Do(ctx, rc.B().Keys().Pattern("storebench:"+ns+":*").Build()).AsStrSlice()
	if err != nil || len(keys) != 100 {
		t.Errorf("kept redis keys: %d, %v; want 100", len(keys), err)
	}
	var rows int
	if err := db.QueryRow("SELECT COUNT(*) FROM `" + ns + "`.kv").Scan(&rows); err != nil || rows != 100 {
		t.Errorf("kept mariadb rows: %d, %v; want 100", rows, err)
	}
	for i, want := range []string{"keys storebench:" + ns + ":* at redis://", "database " + ns + " at mysql://"} {
		if !strings.HasPrefix(res.Targets[i].Kept, want) {
			t.Errorf("target %s: kept %q, want %q…", res.Targets[i].Name, res.Targets[i].Kept, want)
		}
	}

	data := t.TempDir() // not the shared temp dir: what other runs left there is theirs to see
	r := storebench(t, nil, "clean", "--dry-run", "--data-dir", data, "--stores", rd+","+my)
	mustExit(t, r, 0)
	for _, want := range []string{"would remove  keys storebench:" + ns + ":* at redis://", "would remove  database " + ns + " at mysql://"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run: no %q in\n%s", want, r.stdout)
		}
	}
	r = storebench(t, nil, "clean", "--data-dir", data, "--stores", rd+","+my)
	mustExit(t, r, 0)
	if keys, _ := rc.Do(ctx, rc.B().Keys().Pattern("storebench:*").Build()).AsStrSlice(); len(keys) != 0 {
		t.Errorf("keys left after clean: %v", keys)
	}
	for _, k := range foreignKeys {
		if v, err := rc.Do(ctx, rc.B().Get().Key(k).Build()).ToString(); err != nil || v != "theirs" {
			t.Errorf("foreign key %s: %q, %v", k, v, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", ns).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s after clean: %d, %v", ns, n, err)
	}
}

// TestPaymentsKeep: a payments scenario's keep: true leaves the tables
// readable by SQL after the run (they were dropped with the schema before),
// and clean removes them.
func TestPaymentsKeep(t *testing.T) {
	pg := servertest.Start(t, server.Postgres, server.Options{}).URL
	out := t.TempDir()
	scenario := filepath.Join(t.TempDir(), "payments.yaml")
	body := "name: payments-kept\ntargets:\n  - " + pg + "\nworkloads:\n  - type: payments\n    payments:\n      accounts: 1000\n      orgs: 4\n      users_per_org: 2\n      keep: true\nload:\n  clients: 2\n  ops: 200\n"
	if err := os.WriteFile(scenario, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, res := runResult(t, out, "run", scenario, "--out", out, "--quiet")
	ns := res.Targets[0].Namespace
	if !strings.HasPrefix(res.Targets[0].Kept, "schema "+ns+" at postgres://") {
		t.Errorf("kept = %q", res.Targets[0].Kept)
	}
	var accounts, transfers, total int64
	if err := pgQuery(t, pg, `SELECT (SELECT count(*) FROM `+ns+`.accounts), (SELECT count(*) FROM `+ns+`.transfers), (SELECT sum(balance) FROM `+ns+`.accounts)`, &accounts, &transfers, &total); err != nil {
		t.Fatalf("the kept tables: %v", err)
	}
	if accounts != 1000 || transfers == 0 || total <= 0 {
		t.Errorf("kept: %d accounts, %d transfers, balance %d", accounts, transfers, total)
	}
	mustExit(t, storebench(t, nil, "clean", "--data-dir", t.TempDir(), "--stores", pg), 0)
	if names := markedSchemas(t, pg); len(names) != 0 {
		t.Errorf("schemas left after clean: %v", names)
	}
}

// TestKeepAndCleanBadInput: what cannot work is refused in one line, exit
// 2, before any work.
func TestKeepAndCleanBadInput(t *testing.T) {
	dir := t.TempDir()
	managedPayments := filepath.Join(dir, "managed.yaml")
	if err := os.WriteFile(managedPayments, []byte("name: x\ntargets: [postgres]\nworkloads:\n  - type: payments\n    payments: {keep: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keepAll := filepath.Join(dir, "keep.yaml")
	if err := os.WriteFile(keepAll, []byte("name: x\nkeep: true\ntargets: [memory]\nworkloads:\n  - type: kv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	closed := closedPort(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "kv", "--stores", "postgres", "--keep", "--out", dir}, []string{"--keep: target postgres is a managed server", "postgres://"}},
		{[]string{"run", "kv", "--stores", "redis", "--keep", "--out", dir}, []string{"--keep: target redis is a managed server", "redis://"}},
		// Valkey has no URL scheme of its own: a redis:// URL reaches it (it panicked).
		{[]string{"run", "kv", "--stores", "valkey", "--keep", "--out", dir}, []string{"--keep: target valkey is a managed server", "redis://"}},
		{[]string{"run", "kv", "--stores", "memory", "--keep", "--out", dir}, []string{"--keep: target memory", "memory"}},
		{[]string{"run", "kv", "--stores", "files", "--keep", "--out", dir}, []string{"--keep: target files", "file:///path"}},
		{[]string{"run", managedPayments, "--out", dir}, []string{"payments keep: target postgres is a managed server"}},
		{[]string{"run", keepAll, "--out", dir}, []string{"keep.yaml: keep: target memory"}},
		{[]string{"clean", "--stores", "memcached://127.0.0.1:11211"}, []string{"memcached cannot list its keys"}},
		{[]string{"clean", "--stores", "redis"}, []string{"give the URL"}},
		{[]string{"clean", "--data-dir", filepath.Join(dir, "missing")}, []string{"not a directory"}},
		{[]string{"clean", "--stores", "postgres://u:hunter2@127.0.0.1:" + closed + "/x"}, []string{"127.0.0.1:" + closed}},
		{[]string{"clean", "extra"}, []string{"unknown command"}},
	} {
		r := storebench(t, nil, tc.args...)
		mustExit(t, r, 2)
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 {
			t.Errorf("%v: %d lines:\n%s", tc.args, len(lines), r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: no %q in %q", tc.args, w, r.stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("refused runs wrote into --out: %v", entries)
	}
}

// TestCleanLeavesDependents: --keep is there so users can query a run's
// data with their own SQL, so objects outside a kept namespace may depend
// on it: a view in public on the schema's table; in MariaDB a view in
// another database and a foreign key from one. clean and its dry run list
// the namespace with them and leave it (DROP SCHEMA ... CASCADE dropped the
// view; DROP DATABASE left the view broken and stopped at the foreign key
// halfway), exit 0, and say how to remove it deliberately. Once they are
// gone, clean removes it.
func TestCleanLeavesDependents(t *testing.T) {
	pg := servertest.Start(t, server.Postgres, server.Options{}).URL
	my := servertest.Start(t, server.MariaDB, server.Options{}).URL
	u, _ := url.Parse(my)
	db, err := sql.Open("mysql", "root@tcp("+u.Host+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := t.TempDir()
	_, res := runResult(t, out, "run", "kv", "--stores", pg+","+my, "--keys", "10", "--keep", "--out", out, "--quiet")
	ns := res.Targets[0].Namespace // one namespace per run
	const app = "app_reports"
	for _, q := range []string{
		"CREATE DATABASE " + app,
		"CREATE VIEW " + app + ".recent AS SELECT k FROM `" + ns + "`.kv",
		"CREATE TABLE " + app + ".notes (k VARBINARY(3072), CONSTRAINT notes_kv FOREIGN KEY (k) REFERENCES `" + ns + "`.kv (k)) ENGINE=InnoDB",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := pgQuery(t, pg, `CREATE VIEW public.recent AS SELECT k FROM `+ns+`.kv`); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	stores := pg + "," + my
	want := []string{
		"left alone    schema " + ns + " at postgres://",
		"(objects outside it depend on it: view public.recent; to remove it with them, review them and run by hand: DROP SCHEMA \"" + ns + "\" CASCADE; ",
		"left alone    database " + ns + " at mysql://",
		"(objects outside it depend on it: foreign key notes_kv on " + app + ".notes, view " + app + ".recent; to remove it, drop or change them first",
		"then run: DROP DATABASE `" + ns + "`; ",
		// (Exact counts would count what other runs on this machine left in /tmp.)
		" (2 because objects outside depend on them)\n",
	}
	for _, args := range [][]string{{"--dry-run"}, nil} {
		r := storebench(t, nil, append([]string{"clean", "--data-dir", data, "--stores", stores}, args...)...)
		mustExit(t, r, 0)
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("clean %v: no %q in\n%s", args, w, r.stdout)
			}
		}
		var rows int
		if err := pgQuery(t, pg, `SELECT count(*) FROM public.recent`, &rows); err != nil || rows != 10 {
			t.Fatalf("clean %v: the user's view in public: %d rows, %v", args, rows, err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM " + app + ".recent").Scan(&rows); err != nil || rows != 10 {
			t.Fatalf("clean %v: the user's view in %s: %d rows, %v", args, app, rows, err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM `" + ns + "`.storebench_owner").Scan(&rows); err != nil || rows != 1 {
			t.Fatalf("clean %v: the kept database's marker: %d rows, %v", args, rows, err)
		}
	}

	if err := pgQuery(t, pg, `DROP VIEW public.recent`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP DATABASE " + app); err != nil {
		t.Fatal(err)
	}
	r := storebench(t, nil, "clean", "--data-dir", data, "--stores", stores)
	mustExit(t, r, 0)
	for _, w := range []string{"removed       schema " + ns, "removed       database " + ns, "removed: 2, left alone: "} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("clean once the dependents are gone: no %q in\n%s", w, r.stdout)
		}
	}
}
