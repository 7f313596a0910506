package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/testkit"
)

// xactCommits is the database's committed transactions on a server, by
// its own counters (pg_stat_database), once the backends that made them
// have reported: the server's account of where reads went, beside the
// client's.
func xactCommits(t *testing.T, url string) int64 {
	t.Helper()
	return statDatabase(t, url, "xact_commit")
}

// statDatabase reads a counter of the database's row of pg_stat_database.
func statDatabase(t *testing.T, url, column string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	// A snapshot fresh from the shared statistics, not this transaction's cache.
	if _, err := conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT `+column+` FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplicaStoreRoutesReads: under each read policy the reads go where
// it says, by the client's counts and by the replica's own transaction
// counter; writes go to the primary, and every read after CatchUp finds
// what was written; the primary sees its replica streaming.
func TestReplicaStoreRoutesReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	primary := servertest.Start(t, server.Postgres, server.Options{})
	replica, err := server.StartReplica(ctx, primary, server.Options{BaseDir: servertest.BaseDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replica.Stop(context.Background()) })
	url := "postgres-replicas://storebench@" + primary.Addr + "," + replica.Addr + "/storebench?sslmode=disable"
	const keys, reads = 50, 400
	for _, tc := range []struct {
		policy             string
		minShare, maxShare float64 // of the reads the replica serves
	}{
		{ReadsReplicas, 1, 1}, {ReadsPrimary, 0, 0}, {ReadsAny, 0.5, 0.5},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			s, err := NewReplicas(ctx, ReplicaConfig{URL: url, Namespace: storetest.Namespace(t), Reads: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			c, err := s.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			kv := c.(store.KV)
			for i := range keys {
				k := fmt.Appendf(nil, "k%d", i)
				if err := kv.Set(ctx, k, k, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			before := xactCommits(t, replica.URL)
			timeBefore, err := s.ServerTime(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range reads {
				k := fmt.Appendf(nil, "k%d", i%keys)
				v, ok, err := kv.Get(ctx, k, nil)
				if err != nil || !ok || string(v) != string(k) {
					t.Fatalf("read %d after catch-up: %q %v %v", i, v, ok, err)
				}
			}
			// Every node's executor counted its reads: the sum holds them all.
			timeAfter, err := s.ServerTime(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := timeAfter.Ops["get"].Calls - timeBefore.Ops["get"].Calls; got != reads || !strings.Contains(timeAfter.Source, "summed over the primary and its replicas") {
				t.Errorf("server time: %d gets counted, want %d (%s)", got, reads, timeAfter.Source)
			}
			if err := c.Close(); err != nil { // its backends report their counts as they exit
				t.Fatal(err)
			}
			counts, _ := s.NodeCounts(ctx)
			if len(counts) != 2 || counts[0].Role != "primary" || counts[1].Role != "replica" || counts[1].Addr != replica.Addr {
				t.Fatalf("node counts %+v", counts)
			}
			if counts[0].Writes != keys || counts[1].Writes != 0 || counts[0].Reads+counts[1].Reads != reads {
				t.Errorf("node counts %+v: want %d writes on the primary, %d reads in all", counts, keys, reads)
			}
			want := int64(tc.minShare * reads)
			if got := counts[1].Reads; got < want || got > int64(tc.maxShare*reads) {
				t.Errorf("the replica served %d of %d reads, want %d", got, reads, want)
			}
			// The server's own count: the reads it served and a few
			// statements of ours (this check's, the catch-up's polls).
			var served int64
			testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
				served = xactCommits(t, replica.URL) - before
				return served >= want
			})
			if served < want || served > want+50 {
				t.Errorf("the replica's pg_stat_database counted %d transactions, want %d reads and a few of ours", served, want)
			}
			// A connection per op goes to the op's node alone, by the
			// same policy.
			perOp := store.PerOpClient(s)
			const perOpReads = 20
			sessions := statDatabase(t, primary.URL, "sessions")
			for i := range perOpReads {
				k := fmt.Appendf(nil, "k%d", i)
				if v, ok, err := perOp.Get(ctx, k, nil); err != nil || !ok || string(v) != string(k) {
					t.Fatalf("per-op read %d: %q %v %v", i, v, ok, err)
				}
			}
			// The primary's sessions: those of the reads it served, and
			// this check's own (pg_stat_database.sessions counts a session
			// as it ends).
			onPrimary := perOpReads - int64(tc.minShare*perOpReads)
			var opened int64
			testkit.WaitFor(3*time.Second, 50*time.Millisecond, func() bool {
				opened = statDatabase(t, primary.URL, "sessions") - sessions
				return opened >= onPrimary
			})
			if opened < onPrimary || opened > onPrimary+3 {
				t.Errorf("per-op reads opened %d sessions on the primary, want %d and a few of this check's", opened, onPrimary)
			}
			if err := perOp.Set(ctx, []byte("k0"), []byte("k0"), 0); err != nil {
				t.Fatal(err)
			}
			after, _ := s.NodeCounts(ctx)
			if got := after[1].Reads - counts[1].Reads; got != int64(tc.minShare*perOpReads) || after[0].Writes != keys+1 {
				t.Errorf("per-op: the replica served %d of %d reads, the primary %d writes: %+v", got, perOpReads, after[0].Writes, after)
			}
			lags, err := s.ReplicaLag(ctx)
			if err != nil || len(lags) != 1 || lags[0].Bytes < 0 || !strings.HasPrefix(lags[0].Replica, "127.0.0.1:") {
				t.Errorf("replica lag %+v, %v", lags, err)
			}
		})
	}
}

// TestReplicaConfigRefusals: what cannot be a replica set is refused
// without connecting, and no message quotes the URL's password.
func TestReplicaConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		cfg  ReplicaConfig
		want string
	}{
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:5432/db", Namespace: "n"}, "one host"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:5432,h2:0/db", Namespace: "n"}, "node 2 of 2: want host:port"},
		{ReplicaConfig{URL: "postgres://u:hunter2@h1:5432,h2:5432/db", Namespace: "n"}, "want a postgres-replicas:// URL"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h0:1,h1:1,h2:1,h3:1,h4:1,h5:1,h6:1,h7:1,h8:1,h9:1/db", Namespace: "n"}, "9 replicas: at most 8"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:1,h2:2/db?sslmode=hunter2", Namespace: "n"}, "node 1 of 2"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:1,h2:2/db", Namespace: "n", Design: DesignUnlogged}, "not replicated"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:1,h2:2/db", Namespace: "n", Reads: "hunter2 x"}, "unknown read policy"},
		{ReplicaConfig{URL: "postgres-replicas://u:hunter2@h1:1,h2:2/db", Namespace: "n", Reads: "nearest"}, "valid: replicas, primary, any"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v, want %q and no password", tc.cfg.Design+" "+tc.cfg.Reads, err, tc.want)
		}
	}
	if urls, err := replicaURLs("postgres-replicas://u:p%40ss@h1:1,h2:2/db?sslmode=disable"); err != nil || len(urls) != 2 || urls[1] != "postgres://u:p%40ss@h2:2/db?sslmode=disable" {
		t.Errorf("node URLs %v, %v", urls, err)
	}
}
