package cacheaside

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	schema "github.com/storebench/storebench/internal/result/cacheaside"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

func dur(d time.Duration) *time.Duration { return &d }
func f64(v float64) *float64             { return &v }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// env opens a PostgreSQL database and a cache of kind cache ("": none), on
// fresh managed servers.
func env(t *testing.T, cache string) Env {
	t.Helper()
	e := Env{DB: workloadtest.Openers["postgres"](t)}
	if cache != "" {
		e.Cache = workloadtest.Openers[cache](t)
	}
	return e
}

func run(t *testing.T, e Env, p Params) Summary {
	t.Helper()
	sum, phases, err := Run(ctxT(t), e, p, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range phases {
		if len(ph.Errors) > 0 {
			t.Fatalf("phase %s: errors %v: %v", ph.Name, ph.Errors, ph.ErrorSamples)
		}
	}
	return Summary{sum.CacheAside}
}

// Summary wraps the schema's for the tests' logs.
type Summary struct{ *schema.Summary }

// TestCacheLargerThanKeyspace: with a cache that holds every key and a
// warm-up that touched every key, a read-mostly load with the update
// policy hits at least 99% of the time and reads the database at most
// once per 100 requests.
func TestCacheLargerThanKeyspace(t *testing.T) {
	for _, cache := range []string{"redis", "memcached"} {
		t.Run(cache, func(t *testing.T) {
			s := run(t, env(t, cache), Params{
				Keyspace: workload.Keyspace{Keys: 500, ValueSize: 64}, KeyDist: keydist.Uniform,
				ReadRatio: f64(0.95), Policy: Update, TTL: dur(time.Hour),
				Load: workload.Load{Clients: 4, Ops: 10_000, WarmupOps: 10_000},
			})
			t.Logf("%s: hit ratio %.4f, db reads/request %.4f, requests %d", cache, s.HitRatio, float64(s.DBReads)/float64(s.Requests), s.Requests)
			if s.Requests != 10_000 || s.Reads == 0 || s.Writes == 0 {
				t.Fatalf("requests %d (reads %d, writes %d), want 10000 of both kinds", s.Requests, s.Reads, s.Writes)
			}
			if s.HitRatio < 0.99 {
				t.Errorf("hit ratio %.4f, want >= 0.99", s.HitRatio)
			}
			if perRequest := float64(s.DBReads) / float64(s.Requests); perRequest > 0.01 {
				t.Errorf("database reads per request %.4f, want <= 0.01", perRequest)
			}
			if s.Latency.Hit.P99 <= 0 || s.Latency.Write.P99 <= 0 {
				t.Errorf("latency by kind missing: %+v", s.Latency)
			}
			if len(s.PerSecond) == 0 || s.PerSecond[0].Reads == 0 {
				t.Errorf("per-second series %+v, want reads in the first second", s.PerSecond)
			}
		})
	}
}

// TestNoCacheEveryReadQueriesTheDatabase: with TTL 0, and with no cache at
// all, every read is a database read and none hits.
func TestNoCacheEveryReadQueriesTheDatabase(t *testing.T) {
	e := env(t, "redis")
	for name, e := range map[string]Env{"ttl-0": e, "database-alone": {DB: e.DB}} {
		t.Run(name, func(t *testing.T) {
			s := run(t, e, Params{
				Keyspace: workload.Keyspace{Keys: 200, ValueSize: 64}, ReadRatio: f64(0.9), TTL: dur(0),
				Load: workload.Load{Clients: 2, Ops: 2000, WarmupOps: 200},
			})
			if s.CacheUsed || s.Hits != 0 {
				t.Errorf("cache used %v, hits %d: want no cache", s.CacheUsed, s.Hits)
			}
			if s.Reads == 0 || s.DBReadsPerRead != 1 || s.DBReads != s.Reads {
				t.Errorf("database reads %d of %d reads (%v per read), want exactly one per read", s.DBReads, s.Reads, s.DBReadsPerRead)
			}
		})
	}
}

// TestUpdatePolicyOneClientIsNeverStale: one client that writes then
// updates the cache always reads its own last write back.
func TestUpdatePolicyOneClientIsNeverStale(t *testing.T) {
	s := run(t, env(t, "redis"), Params{
		Keyspace: workload.Keyspace{Keys: 20, ValueSize: 64}, KeyDist: keydist.Uniform,
		ReadRatio: f64(0.5), Policy: Update, TTL: dur(time.Hour),
		Load: workload.Load{Clients: 1, Ops: 4000},
	})
	if s.Writes < 1000 || s.Hits < 1000 {
		t.Fatalf("writes %d, hits %d: want both to exercise the cache", s.Writes, s.Hits)
	}
	if s.Staleness.Stale != 0 || s.Staleness.MonotonicBroken != 0 {
		t.Errorf("stale reads %d, broken monotonic reads %d, want 0 and 0", s.Staleness.Stale, s.Staleness.MonotonicBroken)
	}
	if s.Staleness.Checked != s.Reads {
		t.Errorf("checked %d of %d reads", s.Staleness.Checked, s.Reads)
	}
}

// TestInvalidateConcurrentWritersStaleReadsAreReal: with invalidation and
// concurrent writers on few keys, stale reads happen (a read between a
// commit and its delete; a miss that fills an old row after a newer one's
// delete), are counted, and each one is checked against the database: the
// test reads the row at once and finds a newer version than the read
// returned.
func TestInvalidateConcurrentWritersStaleReadsAreReal(t *testing.T) {
	e := env(t, "redis")
	c, err := e.DB.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db := c.(store.KV)
	var mu sync.Mutex
	var seen, notStale int64
	var problems []string
	p := Params{
		Keyspace: workload.Keyspace{Keys: 8, ValueSize: 64}, KeyDist: keydist.Uniform,
		ReadRatio: f64(0.6), Policy: Invalidate, TTL: dur(time.Hour),
		Load: workload.Load{Clients: 8, Ops: 6000},
	}
	p.onStale = func(i int64, got, committed uint64) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		key := workload.AppendKey(nil, workload.KeySequential, 0, i)
		row, ok, err := db.Get(context.Background(), key, nil)
		if err != nil || !ok || len(row) < headerSize {
			problems = append(problems, "re-read "+string(key)+" failed")
			return
		}
		if v := binary.BigEndian.Uint64(row); v <= got || v < committed {
			notStale++
			problems = append(problems, string(key))
		}
	}
	s := run(t, e, p)
	t.Logf("stale %d of %d reads, max age %.0f µs, mean %.0f µs, broken monotonic %d", s.Staleness.Stale, s.Reads, s.Staleness.MaxAgeUs, s.Staleness.MeanAgeUs, s.Staleness.MonotonicBroken)
	if s.Staleness.Stale == 0 {
		t.Fatal("no stale read counted: 8 clients writing 8 keys with invalidation must leave some")
	}
	if seen != s.Staleness.Stale {
		t.Errorf("summary counts %d stale reads, the test saw %d", s.Staleness.Stale, seen)
	}
	if notStale > 0 {
		t.Errorf("%d counted stale reads were not stale by the database: %s", notStale, strings.Join(problems[:min(len(problems), 5)], ", "))
	}
	if s.Staleness.MaxAgeUs <= 0 {
		t.Errorf("max age %v µs, want > 0", s.Staleness.MaxAgeUs)
	}
}

// TestStampede: 50 clients read one hot key whose entry expires every
// second. Without protection an expiry costs the database more than one
// query; with the lease exactly one; with XFetch every query is an early
// recomputation.
func TestStampede(t *testing.T) {
	s := run(t, env(t, "redis"), Params{
		Keyspace: workload.Keyspace{Keys: 100, ValueSize: 64},
		Load:     workload.Load{Clients: 2, Ops: 200},
		Stampede: Stampede{Protections: Protections, Clients: 50, TTL: time.Second, Duration: 3500 * time.Millisecond},
	})
	by := map[string]int{}
	for i, st := range s.Stampede {
		by[st.Protection] = i
		t.Logf("%-8s expiries %d, db queries %d (%.2f per expiry, max %d), refills %d (p99 %.0f µs), waits %d, early %d",
			st.Protection, st.Expiries, st.DBQueries, st.DBQueriesPerExpiry, st.MaxDBQueriesPerExpiry, st.Refills, st.RefillP99Us, st.LeaseWaits, st.EarlyRecomputes)
		if st.Expiries < 2 || st.DBQueries < st.Expiries && st.Protection != ProtectXFetch {
			t.Errorf("%s: %d expiries, %d database queries: want an expiry a second, each refilled", st.Protection, st.Expiries, st.DBQueries)
		}
	}
	if len(s.Stampede) != len(Protections) {
		t.Fatalf("%d stampede results, want %d", len(s.Stampede), len(Protections))
	}
	if none := s.Stampede[by[ProtectNone]]; none.DBQueriesPerExpiry <= 1 {
		t.Errorf("no protection: %.2f database queries per expiry, want more than 1", none.DBQueriesPerExpiry)
	}
	// XFetch decides by the value's own expiry, and the cache keeps its
	// entry past it: every refill is an early recomputation, none a miss.
	if x := s.Stampede[by[ProtectXFetch]]; x.EarlyRecomputes != x.DBQueries {
		t.Errorf("xfetch: %d of %d database queries were early recomputations, want all", x.EarlyRecomputes, x.DBQueries)
	}
	if lease := s.Stampede[by[ProtectLease]]; lease.DBQueries != lease.Expiries || lease.MaxDBQueriesPerExpiry != 1 {
		t.Errorf("lease: %d database queries for %d expiries (max %d for one), want exactly 1 per expiry", lease.DBQueries, lease.Expiries, lease.MaxDBQueriesPerExpiry)
	}
}

// TestKeyspaceLargerThanTheCache: a Redis limited to 2 MB (maxmemory,
// allkeys-lru) in front of 40,000 rows of ~10 MB cannot hold them: reads
// keep missing as the cache evicts, every miss refills without an error,
// and the hit ratio stays near the share of the rows that fit.
func TestKeyspaceLargerThanTheCache(t *testing.T) {
	cache := workloadtest.RedisWith(t, map[string]string{"maxmemory": "2mb", "maxmemory-policy": "allkeys-lru"})
	s := run(t, Env{DB: workloadtest.Openers["postgres"](t), Cache: cache}, Params{
		Keyspace: workload.Keyspace{Keys: 40_000, ValueSize: 200}, KeyDist: keydist.Uniform, ReadRatio: f64(1), TTL: dur(time.Hour),
		Load: workload.Load{Clients: 4, Ops: 20_000, WarmupOps: 20_000},
	})
	t.Logf("hit ratio %.3f, database reads per read %.3f", s.HitRatio, s.DBReadsPerRead)
	if s.HitRatio > 0.5 || s.HitRatio == 0 {
		t.Errorf("hit ratio %.3f: a 2 MB cache holds some of 10 MB of rows drawn uniformly, want above 0 and at most 0.5", s.HitRatio)
	}
	if s.DBReads != s.Misses || s.Misses+s.Hits != s.Reads {
		t.Errorf("reads %d = hits %d + misses %d, database reads %d: every miss must read the database once", s.Reads, s.Hits, s.Misses, s.DBReads)
	}
}
