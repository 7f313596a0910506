package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func open(t testing.TB, url, design string) *Store {
	s, err := New(context.Background(), Config{URL: url, Namespace: storetest.Namespace(t), Design: design})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// countingConn counts the writes on a connection: a round trip each.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// sql runs statements on a connection of its own, as a foreign user would.
func sql(t *testing.T, url string) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, q string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestPostgres shares one server among its subtests: starting one costs
// about a second.
func TestPostgres(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	opts := storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			conn := sql(t, url)
			// A schema named like a namespace but without the marker, and a public table.
			ns := storetest.Namespace(t)
			exec(t, conn, `CREATE SCHEMA `+ns)
			exec(t, conn, `CREATE TABLE `+ns+`.kv (k bytea PRIMARY KEY, v bytea)`)
			exec(t, conn, `INSERT INTO `+ns+`.kv VALUES ('k', 'v')`)
			exec(t, conn, `CREATE TABLE public.`+ns+` (x int)`)
			exec(t, conn, `INSERT INTO public.`+ns+` VALUES (42)`)
			return func(t *testing.T) {
				conn := sql(t, url)
				var v []byte
				var x int
				if err := conn.QueryRow(context.Background(), `SELECT v FROM `+ns+`.kv`).Scan(&v); err != nil || string(v) != "v" {
					t.Errorf("foreign schema %s: %q, %v", ns, v, err)
				}
				if err := conn.QueryRow(context.Background(), `SELECT x FROM public.`+ns).Scan(&x); err != nil || x != 42 {
					t.Errorf("foreign table public.%s: %d, %v", ns, x, err)
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			var n int
			if err := sql(t, url).QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, info.Namespace).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		},
	}
	for _, design := range []string{DesignLogged, DesignUnlogged} {
		t.Run("KV/"+design, func(t *testing.T) {
			t.Parallel()
			storetest.RunKVOptions(t, func(t *testing.T) store.Store { return open(t, url, design) }, opts)
		})
	}
	for _, design := range []string{DesignLogged, DesignUnlogged, DesignCovering} {
		t.Run("Add/"+design, func(t *testing.T) {
			t.Parallel()
			storetest.RunAdd(t, func(t *testing.T) store.Store { return open(t, url, design) })
		})
	}
	for _, design := range []string{DesignLogged, DesignUnlogged} {
		t.Run("Records/"+design, func(t *testing.T) {
			t.Parallel()
			storetest.RunRecords(t, func(t *testing.T) store.Store { return open(t, url, design) }, nil)
		})
	}
	t.Run("Add/hash-index", func(t *testing.T) {
		t.Parallel()
		// No unique key: Add must say it cannot, not insert a duplicate row.
		_, a := storetest.AdderClient(t, open(t, url, DesignHashIndex))
		_, err := a.Add(context.Background(), []byte("k"), []byte("v"), 0)
		storetest.ErrIs(t, err, store.ErrUnsupported)
	})
	t.Run("KV/blocking-io", func(t *testing.T) {
		t.Parallel()
		storetest.RunKVOptions(t, storetest.Blocking(func(t *testing.T) store.Store { return open(t, url, DesignLogged) }), opts)
	})
	t.Run("KV/per-request", func(t *testing.T) {
		t.Parallel()
		storetest.RunKVOptions(t, storetest.PerRequest(func(t *testing.T) store.Store { return open(t, url, DesignLogged) }), storetest.PerRequestOptions(opts))
	})

	t.Run("OpenFailsOnAFailedPrepare", func(t *testing.T) {
		t.Parallel()
		s := open(t, url, DesignLogged)
		if _, err := sql(t, url).Exec(context.Background(), "DROP TABLE "+pgx.Identifier{s.cfg.Namespace, "kv"}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "prepare sb_get") {
			t.Errorf("Open with the table gone: %v, %v; want a prepare error", c, err)
		}
	})

	t.Run("PerRequestIsOneRoundTrip", func(t *testing.T) {
		t.Parallel()
		s := open(t, url, DesignLogged)
		var writes atomic.Int64
		dial := s.pgcfg.DialFunc
		s.pgcfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			return &countingConn{Conn: c, writes: &writes}, err
		}
		ctx := context.Background()
		writesOf := func(f func()) int64 {
			before := writes.Load()
			f()
			return writes.Load() - before
		}
		var pooled, perRequest store.Client
		openPooled := writesOf(func() { pooled = storetest.KVClient(t, s).(store.Client) })
		openPerRequest := writesOf(func() {
			var err error
			if perRequest, err = s.OpenPerRequest(ctx); err != nil {
				t.Fatal(err)
			}
		})
		defer perRequest.Close()
		if openPooled-openPerRequest != 3 {
			t.Errorf("opening wrote %d times for a pooled client, %d for a per-request one: want the three prepares less", openPooled, openPerRequest)
		}
		for _, c := range []store.Client{pooled, perRequest} {
			if n := writesOf(func() {
				if _, _, err := c.(store.KV).Get(ctx, []byte("k"), nil); err != nil {
					t.Fatal(err)
				}
			}); n != 1 {
				t.Errorf("%T get wrote %d times, want 1", c, n)
			}
		}
	})

	t.Run("Unlogged", func(t *testing.T) {
		t.Parallel()
		for design, want := range map[string]string{DesignLogged: "p", DesignUnlogged: "u"} {
			s := open(t, url, design)
			info, err := s.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got string
			err = sql(t, url).QueryRow(context.Background(), `SELECT relpersistence::text FROM pg_class c
				JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'kv'`, info.Namespace).Scan(&got)
			if err != nil || got != want {
				t.Errorf("%s: relpersistence = %q, %v; want %q", design, got, err, want)
			}
			if design == DesignUnlogged && info.Durability != "UNLOGGED: table emptied after a crash" {
				t.Errorf("unlogged durability = %q", info.Durability)
			}
		}
	})

	t.Run("Info", func(t *testing.T) {
		t.Parallel()
		info, err := open(t, url, "").Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range settingNames {
			if info.Settings[k] == "" {
				t.Errorf("setting %s missing", k)
			}
		}
		if info.Durability != "fsync every commit (WAL)" && !strings.HasPrefix(info.Durability, "WAL, commit not waited") {
			t.Errorf("durability %q", info.Durability)
		}
	})

	t.Run("RefusesUnmarkedSchema", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conn := sql(t, url)
		exec(t, conn, `CREATE SCHEMA sbt_taken`)
		exec(t, conn, `CREATE TABLE sbt_taken.kv (x int)`)
		_, err := New(ctx, Config{URL: url, Namespace: "sbt_taken"})
		storetest.ErrIs(t, err, store.ErrNotOwned)
		exec(t, conn, `COMMENT ON SCHEMA sbt_taken IS 'someone else'`)
		_, err = New(ctx, Config{URL: url, Namespace: "sbt_taken"})
		storetest.ErrIs(t, err, store.ErrNotOwned)

		// A store whose marker is removed refuses to truncate or drop.
		s := open(t, url, "")
		exec(t, conn, `COMMENT ON SCHEMA `+s.cfg.Namespace+` IS NULL`)
		storetest.ErrIs(t, s.Reset(ctx), store.ErrNotOwned)
		storetest.ErrIs(t, s.Close(ctx), store.ErrNotOwned)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname IN ('sbt_taken', $1)`, s.cfg.Namespace).Scan(&n); err != nil || n != 2 {
			t.Errorf("schemas left: %d, %v; want 2", n, err)
		}
		exec(t, conn, `DROP SCHEMA sbt_taken CASCADE`)
		exec(t, conn, `DROP SCHEMA `+s.cfg.Namespace+` CASCADE`)
	})

	t.Run("ReusesMarkedLeftover", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		a, err := New(ctx, Config{URL: url, Namespace: "sbt_leftover"})
		if err != nil {
			t.Fatal(err)
		}
		if err := storetest.KVClient(t, a).Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		b, err := New(ctx, Config{URL: url, Namespace: "sbt_leftover"}) // a "crashed" and left its schema
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(ctx)
		if _, ok, err := storetest.KVClient(t, b).Get(ctx, []byte("k"), nil); ok || err != nil {
			t.Errorf("leftover row visible: %v, %v", ok, err)
		}
	})

	t.Run("PasswordRedacted", func(t *testing.T) {
		t.Parallel()
		bad := strings.Replace(url, "storebench@", "storebench:s3cretpw@", 1)
		bad = strings.Replace(bad, "/storebench?", "/nosuchdb?", 1)
		_, err := New(context.Background(), Config{URL: bad, Namespace: "sbt_pw"})
		if err == nil || strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	_, err = New(context.Background(), Config{URL: "postgres://u:hunter22@" + addr + "/db?sslmode=disable", Namespace: "sbt_x"})
	if err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("error = %v; want one naming %s without the password", err, addr)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if errclass.Classify(err) != errclass.ClassUnavailable {
		t.Errorf("class = %s", errclass.Classify(err))
	}
}

func TestClassify(t *testing.T) {
	for code, want := range map[string]errclass.Class{
		"40001": errclass.ClassConflict, "40P01": errclass.ClassConflict,
		"57P01": errclass.ClassUnavailable, "08006": errclass.ClassUnavailable,
		"57014": errclass.ClassTimeout, "23505": errclass.ClassOther,
	} {
		err := opErr("get", &pgconn.PgError{Code: code})
		if got := errclass.Classify(err); got != want {
			t.Errorf("%s: class %s, want %s", code, got, want)
		}
		if !strings.HasPrefix(err.Error(), "postgres: get: ") {
			t.Errorf("message %q", err)
		}
	}
	if got := errclass.Classify(opErr("get", context.DeadlineExceeded)); got != errclass.ClassTimeout {
		t.Errorf("deadline: %s", got)
	}
	if !errors.Is(opErr("x", context.Canceled), context.Canceled) {
		t.Error("opErr does not unwrap")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/db": "postgres://u:xxxxx@h:5432/db",
		// User information without a ':' is hidden whole (issue 28: Redis
		// sends it as a password; one rule for every URL).
		"postgres://u@h/db?password=pw&x=1":  "postgres://xxxxx@h/db?password=xxxxx&x=1",
		"host=h user=u password=pw dbname=d": "host=h user=u password=xxxxx dbname=d",
		"postgres://u@h/db?sslmode=disable":  "postgres://xxxxx@h/db?sslmode=disable",
	} {
		if got := store.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"btree-ish", "hash-index,covering", "unlogged,"} {
		if err := (Config{URL: "postgres://u@h/db", Namespace: "a", Design: bad}).Validate(); err == nil {
			t.Errorf("design %q accepted", bad)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	url := servertest.Start(b, server.Postgres, server.Options{}).URL
	storetest.BenchGet(b, open(b, url, ""))
}

func BenchmarkSet(b *testing.B) {
	url := servertest.Start(b, server.Postgres, server.Options{}).URL
	for _, d := range []string{DesignLogged, DesignUnlogged} {
		b.Run(d, func(b *testing.B) { storetest.BenchSet(b, open(b, url, d)) })
	}
}

// Each design is in effect in the catalog, and the covering design really
// serves reads by index-only scans once settled.
func TestDesignsInTheCatalog(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Postgres, server.Options{})
	for _, c := range []struct {
		design, persistence, index string
		includes                   bool
	}{
		{"logged", "p", "btree", false},
		{"unlogged", "u", "btree", false},
		{"hash-index", "p", "hash", false},
		{"covering", "p", "btree", true},
		{"unlogged,covering", "u", "btree", true},
	} {
		ns := storetest.Namespace(t)
		st, err := New(ctx, Config{URL: srv.URL, Namespace: ns, Design: c.design})
		if err != nil {
			t.Fatalf("%s: %v", c.design, err)
		}
		kv := storetest.KVClient(t, st)
		for i := 0; i < 200; i++ {
			if err := kv.Set(ctx, []byte(fmt.Sprintf("k%d", i)), []byte("v"), 0); err != nil {
				t.Fatalf("%s: set: %v", c.design, err)
			}
		}
		if err := kv.Set(ctx, []byte("k1"), []byte("again"), 0); err != nil { // update path, hash design included
			t.Fatal(err)
		}
		if got, ok, err := kv.Get(ctx, []byte("k1"), nil); err != nil || !ok || string(got) != "again" {
			t.Fatalf("%s: overwrite read back %q %v %v", c.design, got, ok, err)
		}
		conn, err := pgx.Connect(ctx, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		var persistence, am string
		var keyAtts, atts int
		err = conn.QueryRow(ctx, `SELECT c.relpersistence::text, a.amname, i.indnkeyatts, i.indnatts
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_index i ON i.indrelid = c.oid JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am a ON a.oid = ic.relam
			WHERE n.nspname = $1 AND c.relname = 'kv'`, ns).Scan(&persistence, &am, &keyAtts, &atts)
		if err != nil {
			t.Fatalf("%s: catalog: %v", c.design, err)
		}
		if persistence != c.persistence || am != c.index || (atts > keyAtts) != c.includes {
			t.Errorf("%s: relpersistence %s, index %s, key/all columns %d/%d; want %s, %s, includes %v",
				c.design, persistence, am, keyAtts, atts, c.persistence, c.index, c.includes)
		}
		if c.includes {
			if err := st.Settle(ctx); err != nil {
				t.Fatal(err)
			}
			var plan string
			rows, _ := conn.Query(ctx, `EXPLAIN SELECT v FROM "`+ns+`".kv WHERE k = $1 AND (expires_at IS NULL OR expires_at > now())`, []byte("k5"))
			for rows.Next() {
				var line string
				rows.Scan(&line)
				plan += line + "\n"
			}
			if !strings.Contains(plan, "Index Only Scan") {
				t.Errorf("%s: reads are not index-only after Settle:\n%s", c.design, plan)
			}
		}
		conn.Close(ctx)
		st.Close(ctx)
	}
}

func BenchmarkGetBatch16(b *testing.B) {
	storetest.BenchGetBatch(b, open(b, servertest.Start(b, server.Postgres, server.Options{}).URL, ""))
}

// BenchmarkGetClients is Get at make bench's concurrencies (8 and 50
// clients, a connection each, 4-byte values): client-µs/op is the
// process's CPU per get (pollio.CPUPerOp), the figure the versus tables
// compare with pgbench's.
func BenchmarkGetClients(b *testing.B) {
	st := open(b, servertest.Start(b, server.Postgres, server.Options{}).URL, "")
	for _, clients := range []int{8, 50} {
		b.Run(fmt.Sprintf("c%d", clients), func(b *testing.B) {
			storetest.BenchGetClients(b, st, clients, []byte("vvvv"))
		})
	}
}
