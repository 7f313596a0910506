package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// sessionsServer is one server for the sessions tests, with function call
// statistics on so V7 can be checked.
func sessionsServer(t *testing.T) *server.Server {
	return servertest.Start(t, server.Postgres, server.Options{Settings: map[string]string{"track_functions": "pl"}})
}

func sessionHandle(t *testing.T, s *Store, d store.SessionDesign) (*sessionClient, *Client) {
	t.Helper()
	h, err := s.OpenSessions(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h.(*sessionClient), h.(*sessionClient).c
}

func TestSessions(t *testing.T) {
	srv := sessionsServer(t)
	t.Run("Conformance", func(t *testing.T) {
		t.Parallel()
		storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, srv.URL, "") }, storetest.SessionOptions{})
	})
	t.Run("ConformanceNaiveTypes", func(t *testing.T) {
		t.Parallel()
		// INT ids, TIMESTAMPTZ, an index on expires_at, an unlogged table,
		// every write in an asynchronous-commit transaction: still correct.
		d := store.SessionDesign{Unlogged: true, IDType: "int", ExpiresIndex: true, AsyncCommit: true, TxForm: TxPipeline}
		storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, srv.URL, "") }, storetest.SessionOptions{Design: d})
	})
	t.Run("Catalog", func(t *testing.T) { t.Parallel(); testSessionsCatalog(t, srv.URL) })
	// Not parallel: pg_stat_wal counts the whole server, and the parallel
	// subtests (paused until this one returns) commit synchronously.
	t.Run("CommitMode", func(t *testing.T) { testSessionsCommitMode(t, srv.URL) })
}

// catalog is what the test reads from the catalog itself, with its own SQL.
type catalog struct {
	persistence, reloptions, idType, payloadType, expiresType string
	payloadNull, expiresNull                                  string
	payloadLen                                                int
	cache                                                     int64
	indexes                                                   []string
	function                                                  string // prosrc of new_session, "" when absent
}

func readCatalog(t *testing.T, url, schema string) catalog {
	t.Helper()
	conn := sql(t, url)
	ctx := context.Background()
	tbl := `"` + schema + `".sessions`
	var c catalog
	if err := conn.QueryRow(ctx, `SELECT relpersistence::text, coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = $1::regclass`, tbl).Scan(&c.persistence, &c.reloptions); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT column_name, data_type, is_nullable, coalesce(character_maximum_length, 0)
		FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'sessions'`, schema)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, typ, null string
		var n int
		if err := rows.Scan(&name, &typ, &null, &n); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "id":
			c.idType = typ
		case "payload":
			c.payloadType, c.payloadNull, c.payloadLen = typ, null, n
		case "expires_at":
			c.expiresType, c.expiresNull = typ, null
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT seqcache FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence($1, 'id')::regclass`, tbl).Scan(&c.cache); err != nil {
		t.Fatal(err)
	}
	irows, err := conn.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'sessions' ORDER BY indexname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	for irows.Next() {
		var def string
		if err := irows.Scan(&def); err != nil {
			t.Fatal(err)
		}
		c.indexes = append(c.indexes, def)
	}
	if err := irows.Err(); err != nil {
		t.Fatal(err)
	}
	_ = conn.QueryRow(ctx, `SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'new_session'`, schema).Scan(&c.function)
	return c
}

// naiveDesign is the article's first table, every knob on its naive side.
func naiveDesign() store.SessionDesign {
	return store.SessionDesign{TTL: time.Minute, Unlogged: true, IDType: "int", IDCache: 1, PayloadType: "jsonb",
		ExpiresType: "timestamptz", ExpiresIndex: true, KeepaliveOnRead: true, Fillfactor: 100}
}

// testSessionsCatalog switches each knob on its own from the naive design,
// and all of them at once (the tuned side), and reads every design back from
// the catalog; a create and a read prove the statements fit the layout.
func testSessionsCatalog(t *testing.T, url string) {
	base := catalog{persistence: "u", reloptions: "", idType: "integer", payloadType: "jsonb", expiresType: "timestamp with time zone",
		payloadNull: "YES", expiresNull: "YES", cache: 1, indexes: []string{"expires", "pkey"}}
	tuned := func(d *store.SessionDesign) {
		d.Unlogged, d.IDType, d.IDCache, d.PayloadType, d.ExpiresType = false, "bigint", 100, "text", "timestamp"
		d.AsyncCommit, d.Function, d.ExpiresIndex, d.Fillfactor, d.TableAutovacuum = true, true, false, 70, true
		d.KeepaliveOnRead, d.RefreshBelow = false, 40*time.Second
	}
	tunedAutovacuum := "autovacuum_vacuum_threshold=2000,autovacuum_vacuum_scale_factor=0.01,autovacuum_vacuum_cost_delay=2"
	cases := []struct {
		knob   string
		set    func(d *store.SessionDesign)
		expect func(c *catalog)
	}{
		{"naive", func(*store.SessionDesign) {}, func(*catalog) {}},
		{"V1 logged", func(d *store.SessionDesign) { d.Unlogged = false }, func(c *catalog) { c.persistence = "p" }},
		{"V2 bigint", func(d *store.SessionDesign) { d.IDType = "bigint" }, func(c *catalog) { c.idType = "bigint" }},
		{"V3 cache 100", func(d *store.SessionDesign) { d.IDCache = 100 }, func(c *catalog) { c.cache = 100 }},
		{"V4 text", func(d *store.SessionDesign) { d.PayloadType = "text" }, func(c *catalog) { c.payloadType = "text" }},
		{"V4 json", func(d *store.SessionDesign) { d.PayloadType = "json" }, func(c *catalog) { c.payloadType = "json" }},
		{"V4 bytea", func(d *store.SessionDesign) { d.PayloadType = "bytea" }, func(c *catalog) { c.payloadType = "bytea" }},
		{"V5 timestamp", func(d *store.SessionDesign) { d.ExpiresType = "timestamp" }, func(c *catalog) { c.expiresType = "timestamp without time zone" }},
		{"V7 function, sync", func(d *store.SessionDesign) { d.Function = true }, func(c *catalog) { c.function = "INSERT INTO" }},
		{"V6+V7 function, async", func(d *store.SessionDesign) { d.Function, d.AsyncCommit = true, true },
			func(c *catalog) { c.function = "set_config('synchronous_commit', 'off', true)" }},
		{"V8 no index", func(d *store.SessionDesign) { d.ExpiresIndex = false }, func(c *catalog) { c.indexes = []string{"pkey"} }},
		{"V12 fillfactor 70", func(d *store.SessionDesign) { d.Fillfactor = 70 }, func(c *catalog) { c.reloptions = "fillfactor=70" }},
		{"V12 fillfactor 50", func(d *store.SessionDesign) { d.Fillfactor = 50 }, func(c *catalog) { c.reloptions = "fillfactor=50" }},
		{"V13 table autovacuum", func(d *store.SessionDesign) { d.TableAutovacuum = true }, func(c *catalog) { c.reloptions = tunedAutovacuum }},
		{"V15 constraints, text", func(d *store.SessionDesign) { d.Constraints, d.PayloadType = true, "text" },
			func(c *catalog) {
				c.payloadType, c.payloadLen, c.payloadNull, c.expiresNull = "character varying", 256, "NO", "NO"
			}},
		{"tuned", tuned, func(c *catalog) {
			c.persistence, c.idType, c.cache, c.payloadType, c.expiresType = "p", "bigint", 100, "text", "timestamp without time zone"
			c.function, c.indexes, c.reloptions = "set_config('synchronous_commit', 'off', true)", []string{"pkey"}, "fillfactor=70,"+tunedAutovacuum
		}},
	}
	for _, tc := range cases {
		t.Run(tc.knob, func(t *testing.T) {
			t.Parallel()
			s := open(t, url, "")
			d := naiveDesign()
			tc.set(&d)
			h, _ := sessionHandle(t, s, d)
			ctx := context.Background()
			if err := h.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			want := base
			want.indexes = append([]string(nil), base.indexes...)
			tc.expect(&want)
			got := readCatalog(t, url, s.cfg.Namespace)
			if got.persistence != want.persistence || got.reloptions != want.reloptions || got.idType != want.idType ||
				got.payloadType != want.payloadType || got.expiresType != want.expiresType || got.cache != want.cache ||
				got.payloadNull != want.payloadNull || got.expiresNull != want.expiresNull || got.payloadLen != want.payloadLen {
				t.Errorf("catalog:\n got %+v\nwant %+v", got, want)
			}
			if len(got.indexes) != len(want.indexes) {
				t.Errorf("indexes %q, want %d (%v)", got.indexes, len(want.indexes), want.indexes)
			} else {
				for i, w := range want.indexes {
					if !strings.Contains(got.indexes[i], w) {
						t.Errorf("index %d: %q does not mention %q", i, got.indexes[i], w)
					}
				}
			}
			if want.function == "" && got.function != "" || !strings.Contains(got.function, want.function) {
				t.Errorf("new_session(): %q, want it to contain %q", got.function, want.function)
			}
			// Describe reads the same catalog for the result.
			desc, err := h.Describe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if desc["relpersistence"] != got.persistence || strings.ReplaceAll(desc["reloptions"], ", ", ",") != got.reloptions {
				t.Errorf("Describe: persistence %q reloptions %q", desc["relpersistence"], desc["reloptions"])
			}
			// The statements fit the layout, and a function design really
			// goes through the function (pg_stat_user_functions).
			payload := []byte(`{"user":42,"pad":"` + strings.Repeat("x", 200) + `"}`)
			id, err := h.Create(ctx, 0, payload)
			if err != nil {
				t.Fatal(err)
			}
			got2, ok, err := h.Read(ctx, id, nil)
			if err != nil || !ok {
				t.Fatalf("read back %d: %v %v", id, ok, err)
			}
			if d.PayloadType != "jsonb" && string(got2) != string(payload) {
				t.Errorf("payload %q, want %q", got2, payload)
			}
			if d.Function {
				if calls := functionCalls(t, h, url, s.cfg.Namespace); calls != 1 {
					t.Errorf("new_session() called %d times, want 1", calls)
				}
			}
		})
	}
}

// functionCalls reads pg_stat_user_functions after making the handle's
// backend flush its statistics.
func functionCalls(t *testing.T, h *sessionClient, url, schema string) int64 {
	t.Helper()
	ctx := context.Background()
	flushStats(t, h)
	var n int64
	if err := sql(t, url).QueryRow(ctx, `SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE schemaname = $1 AND funcname = 'new_session'`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// flushStats makes the handle's backend report its statistics now rather
// than up to a second later (PostgreSQL 15+).
func flushStats(t *testing.T, h *sessionClient) {
	t.Helper()
	if _, err := h.c.conn.Exec(context.Background(), `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
}

// testSessionsCommitMode proves V6 by its effect: with synchronous commit
// every create fsyncs the WAL (pg_stat_wal.wal_sync grows by one per
// create); with synchronous_commit=off per transaction, in every form,
// creates leave the syncs to the WAL writer. Keepalives and reaps of an
// asynchronous design are asynchronous too.
func testSessionsCommitMode(t *testing.T, url string) {
	const n = 100
	cases := []struct {
		name  string
		async bool
		set   func(d *store.SessionDesign)
	}{
		{"sync insert", false, func(d *store.SessionDesign) {}},
		{"sync function", false, func(d *store.SessionDesign) { d.Function = true }},
		{"async statements", true, func(d *store.SessionDesign) { d.AsyncCommit, d.TxForm = true, TxStatements }},
		{"async string", true, func(d *store.SessionDesign) { d.AsyncCommit, d.TxForm = true, TxString }},
		{"async pipeline", true, func(d *store.SessionDesign) { d.AsyncCommit, d.TxForm = true, TxPipeline }},
		{"async function", true, func(d *store.SessionDesign) { d.AsyncCommit, d.Function = true, true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Not parallel with each other: wal_sync counts the whole server.
			s := open(t, url, "")
			d := store.SessionDesign{TTL: time.Minute}
			tc.set(&d)
			h, _ := sessionHandle(t, s, d)
			ctx := context.Background()
			if err := h.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, n)
			before := walSyncs(t, h)
			for i := range ids {
				id, err := h.Create(ctx, 0, fmt.Appendf(nil, `{"n":%d}`, i))
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = id
			}
			for i := 0; i < n; i += 10 {
				if _, err := h.KeepAlive(ctx, ids[i:i+10]); err != nil {
					t.Fatal(err)
				}
			}
			syncs := walSyncs(t, h) - before
			// Not exactly one per commit: the WAL writer, or another test's
			// backend, can fsync a commit record before its own backend
			// does (seen: 99 for 110 commits). A synchronous design still
			// syncs for most creates and an asynchronous one for few.
			if tc.async && syncs > n/4 || !tc.async && syncs < n*3/4 {
				t.Errorf("%d WAL syncs for %d creates and %d keepalives (async %v)", syncs, n, n/10, tc.async)
			}
		})
	}
}

func walSyncs(t *testing.T, h *sessionClient) int64 {
	t.Helper()
	flushStats(t, h)
	var n int64
	if err := h.c.conn.QueryRow(context.Background(), `SELECT wal_sync FROM pg_stat_wal`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSessionsServerSettings: V14 (autovacuum_max_workers) and the shrunk
// autovacuum_naptime need the server restarted; after server.Reconfigure and
// Reconnect the design asks for nothing more and the store still works.
func TestSessionsServerSettings(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, server.Postgres, server.Options{})
	s := open(t, srv.URL, "")
	ctx := context.Background()
	d := store.SessionDesign{TTL: time.Minute, AutovacuumMaxWorkers: 6, TimeScale: 0.01}
	h, _ := sessionHandle(t, s, d)
	want, err := h.ServerSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 || want["autovacuum_max_workers"] != "6" || want["autovacuum_naptime"] != "1s" {
		t.Fatalf("server settings wanted: %v", want)
	}
	if err := srv.Reconfigure(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	h, _ = sessionHandle(t, s, d)
	if want, err = h.ServerSettings(ctx); err != nil || len(want) != 0 {
		t.Fatalf("after the restart the design still wants %v (%v)", want, err)
	}
	if err := h.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	desc, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if desc["autovacuum_max_workers"] != "6" || desc["autovacuum_naptime"] != "1s" {
		t.Errorf("Describe: autovacuum_max_workers %q naptime %q", desc["autovacuum_max_workers"], desc["autovacuum_naptime"])
	}
	if _, err := s.Info(ctx); err != nil {
		t.Errorf("the store's own connection after the restart: %v", err)
	}
}
