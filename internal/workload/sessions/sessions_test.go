package sessions_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/store/mysql"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/sqlite"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload/sessions"
)

// churnParams is a short phase B: a 2 s TTL (30 min × 1/900), every
// interval shrunk with it, 4 s measured after a 2.7 s warm-up.
func churnParams(design string) sessions.Params {
	p := sessions.Defaults()
	p.Phase, p.Design = sessions.PhaseChurn, design
	p.TimeScale = 1.0 / 900
	p.CreateRate, p.ReadRate, p.Clients, p.CreateClients = 150, 500, 2, 1
	p.Duration = 4 * time.Second
	p.ObserveEvery = 500 * time.Millisecond
	return p
}

func closeStore(t *testing.T, s store.Store) {
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// target starts (or opens) one store of each kind for a test.
func target(t *testing.T, kind string) sessions.Env {
	t.Helper()
	return targetWith(t, kind, nil)
}

// targetWith is target with server settings.
func targetWith(t *testing.T, kind string, settings map[string]string) sessions.Env {
	t.Helper()
	ctx := context.Background()
	ns := storetest.Namespace(t)
	var st store.Store
	var err error
	env := sessions.Env{}
	switch kind {
	case "postgres":
		srv := servertest.Start(t, server.Postgres, server.Options{})
		env.Server = srv
		st, err = postgres.New(ctx, postgres.Config{URL: srv.URL, Namespace: ns})
	case "redis":
		st, err = redis.New(ctx, redis.Config{URL: servertest.Start(t, server.Redis, server.Options{}).URL, Namespace: ns})
	case "memcached":
		st, err = memcached.New(ctx, memcached.Config{URL: servertest.Start(t, server.Memcached, server.Options{Settings: settings}).URL, Namespace: ns})
	case "mariadb":
		st, err = mysql.New(ctx, mysql.Config{URL: servertest.Start(t, server.MariaDB, server.Options{}).URL, Namespace: ns})
	case "files":
		st, err = files.New(ctx, files.Config{Dir: t.TempDir(), Namespace: ns})
	case "sqlite":
		st, err = sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db"), Namespace: ns})
	}
	if err != nil {
		t.Fatal(err)
	}
	closeStore(t, st)
	env.Store = st
	return env
}

func phase(t *testing.T, out sessions.Outcome, name string) metrics.Phase {
	t.Helper()
	for _, p := range out.Phases {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no %s phase in %d phases", name, len(out.Phases))
	return metrics.Phase{}
}

// checkChurn holds for every store: sessions were created and read, reads
// of expired sessions all missed (no stale read), no live session was lost,
// the store was observed, and the summary encodes.
func checkChurn(t *testing.T, out sessions.Outcome) {
	t.Helper()
	s := out.Summary
	k := s.Counters
	if k.Creates == 0 || k.Reads == 0 || k.Hits == 0 || k.ExpiredReads == 0 {
		t.Errorf("counters: %+v", k)
	}
	if k.Stale != 0 || k.Lost != 0 || k.ReadErrors != 0 {
		t.Errorf("stale %d, lost %d, read errors %d (counters %+v)", k.Stale, k.Lost, k.ReadErrors, k)
	}
	// A store whose expiry clock has 1 s resolution (Memcached) leaves a
	// wide window where a read can be neither a hit nor a miss for sure;
	// under CPU contention more keepalives land in it (seen: 8% of reads).
	unjudged := k.Reads / 10
	if k.EarlySlackS >= 1 {
		unjudged = k.Reads / 4
	}
	if k.Unjudged > unjudged {
		t.Errorf("%d of %d reads could not be judged (early slack %.3f s)", k.Unjudged, k.Reads, k.EarlySlackS)
	}
	r := phase(t, out, "read")
	if r.Ops == 0 || len(r.Errors) > 0 {
		t.Errorf("read phase: %d ops, errors %v %v", r.Ops, r.Errors, r.ErrorSamples)
	}
	if c := phase(t, out, "create"); c.Ops == 0 || len(c.Errors) > 0 {
		t.Errorf("create phase: %d ops, errors %v %v", c.Ops, c.Errors, c.ErrorSamples)
	}
	if len(s.Samples) < 3 || s.Figures == nil || s.Figures.PeakRows == 0 {
		t.Errorf("%d samples, figures %+v", len(s.Samples), s.Figures)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
	if testing.Verbose() {
		b, _ := json.MarshalIndent(struct {
			C *schema.Counters
			F *schema.Figures
			N []string
		}{s.Counters, s.Figures, s.Notes}, "", " ")
		t.Logf("%s: read p50 %.0f µs p99 %.0f µs\n%s", s.Design, r.LatencyUs.P50, r.LatencyUs.P99, b)
	}
}

// churnCase is one phase B run of TestChurn and what it must show.
type churnCase struct {
	name  string
	env   sessions.Env
	p     sessions.Params
	check func(t *testing.T, out sessions.Outcome)
	out   sessions.Outcome
	err   error
}

// TestChurn runs phase B on every store, naive and tuned PostgreSQL, reads
// on a replica, and Memcached short of memory, all at once once their
// servers are up: the runs mostly wait (go test would run only GOMAXPROCS
// parallel subtests at a time).
//
//   - every store honours expiry: no expired session is readable, no live
//     one is lost, with the reaper where the store has no native expiry;
//   - PostgreSQL: the tuned design's keepalives are HOT updates (no index on
//     expires_at, fillfactor 70), the naive design's per-read updates of an
//     indexed column never are; each design is read back from the catalog;
//   - the replica serves the tuned (logged) design's reads; the UNLOGGED
//     design's table is there but cannot be read: every read is a miss;
//   - Memcached evicts live sessions when short of memory, and their reads
//     count as lost.
func TestChurn(t *testing.T) {
	var cases []*churnCase
	for _, kind := range []string{"redis", "memcached", "files", "sqlite", "mariadb"} {
		cases = append(cases, &churnCase{name: kind, env: target(t, kind), p: churnParams("tuned"), check: func(t *testing.T, out sessions.Outcome) {
			checkChurn(t, out)
			native := kind == "redis" || kind == "memcached"
			if k := out.Summary.Counters; native != (k.Reaps == 0) || !native && k.Reaped == 0 {
				t.Errorf("%s: %d reaper runs, %d reaped", kind, k.Reaps, k.Reaped)
			}
		}})
	}
	for _, design := range []string{"naive", "tuned"} {
		cases = append(cases, &churnCase{name: "postgres " + design, env: target(t, "postgres"), p: churnParams(design), check: func(t *testing.T, out sessions.Outcome) {
			checkPostgres(t, design, out)
		}})
	}
	for _, design := range []string{"tuned", "tuned,persistence=unlogged"} {
		env := target(t, "postgres")
		replica, err := server.StartReplica(context.Background(), env.Server.(*server.Server), server.Options{BaseDir: servertest.BaseDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { replica.Stop(context.Background()) })
		env.ReplicaURL = replica.URL
		p := churnParams(design)
		p.Replica = true
		cases = append(cases, &churnCase{name: "replica " + design, env: env, p: p, check: func(t *testing.T, out sessions.Outcome) {
			checkReplica(t, design, out)
		}})
	}
	small := churnParams("tuned")
	small.PayloadSize = 64 << 10 // ~300 live sessions of 64 KiB: 19 MiB in 8
	cases = append(cases, &churnCase{name: "memcached short of memory", env: targetWith(t, "memcached", map[string]string{"memory_mb": "8"}), p: small,
		check: func(t *testing.T, out sessions.Outcome) {
			f, k := out.Summary.Figures, out.Summary.Counters
			if f.Evictions == nil || *f.Evictions == 0 || k.Lost == 0 || k.Stale != 0 {
				t.Errorf("evictions %v, lost %d, stale %d (counters %+v)", f.Evictions, k.Lost, k.Stale, k)
			}
		}})

	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() { c.out, c.err = sessions.Run(context.Background(), c.env, c.p, sessions.Hooks{}) })
	}
	wg.Wait()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err != nil {
				t.Fatal(c.err)
			}
			c.check(t, c.out)
		})
	}
}

func checkPostgres(t *testing.T, design string, out sessions.Outcome) {
	checkChurn(t, out)
	f := out.Summary.Figures
	if f.PeakDeadTuples == nil || f.HOTRatio == nil || f.WALBytes == nil || f.TableBytes == nil {
		t.Fatalf("PostgreSQL figures missing: %+v", f)
	}
	c := out.Summary.Catalog
	switch design {
	case "naive":
		if c["relpersistence"] != "u" || !strings.Contains(c["indexes"], "expires_at") || c["autovacuum_max_workers"] != "3" {
			t.Errorf("naive catalog: %v", c)
		}
		if *f.HOTRatio > 0.05 {
			t.Errorf("naive: HOT update ratio %.2f with an index on expires_at", *f.HOTRatio)
		}
	case "tuned":
		if c["relpersistence"] != "p" || strings.Contains(c["indexes"], "expires_at") || c["autovacuum_max_workers"] != "6" ||
			!strings.Contains(c["reloptions"], "fillfactor=70") {
			t.Errorf("tuned catalog: %v", c)
		}
		if *f.HOTRatio < 0.5 {
			t.Errorf("tuned: HOT update ratio %.2f", *f.HOTRatio)
		}
		phase(t, out, "keepalive")
		phase(t, out, "reap")
	}
}

func checkReplica(t *testing.T, design string, out sessions.Outcome) {
	r := out.Summary.Replica
	if r == nil || r.Reads == 0 {
		t.Fatalf("replica %+v", r)
	}
	k := out.Summary.Counters
	if design == "tuned" {
		// Misses of sessions written a moment before are replication lag
		// (counted apart), not lost sessions.
		if r.Hits < k.ActiveReads/2 || r.Errors > 0 || k.Stale > 0 || k.Lost > 0 {
			t.Errorf("tuned on the replica: %+v, counters %+v", r, k)
		}
	} else if r.Hits != 0 || r.Misses != r.Reads || !strings.Contains(r.ErrorSample, "unlogged") {
		t.Errorf("unlogged on the replica: %+v", r)
	}
	t.Logf("%s: replica reads %d hits %d misses %d (lag %d) errors %d (%s)", design, r.Reads, r.Hits, r.Misses, r.LagMisses, r.Errors, r.ErrorSample)
}

// TestInsertVariants runs phase A's six variants briefly: each inserts
// through its own SQL, the variant's design read back from the catalog.
func TestInsertVariants(t *testing.T) {
	t.Parallel()
	env := target(t, "postgres")
	for _, v := range sessions.Variants {
		p := sessions.Defaults()
		p.Phase, p.Variant, p.Inserts = sessions.PhaseInsert, v, 300
		out, err := sessions.Run(context.Background(), env, p, sessions.Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		ph := phase(t, out, "insert")
		if ph.Ops != 300 || len(ph.Errors) > 0 {
			t.Errorf("%s: %d inserts, errors %v", v, ph.Ops, ph.Errors)
		}
		wantPersistence := "p"
		if v == "unlogged" {
			wantPersistence = "u"
		}
		c := out.Summary.Catalog
		if c["relpersistence"] != wantPersistence || strings.Contains(c["function"], "set_config") != (v == "function") {
			t.Errorf("%s: catalog %v", v, c)
		}
	}
	if _, err := sessions.Run(context.Background(), target(t, "redis"), sessions.Params{Phase: sessions.PhaseInsert, Variant: "logged", Inserts: 1, PayloadSize: 250}, sessions.Hooks{}); err == nil {
		t.Error("phase A ran on redis")
	}
}
