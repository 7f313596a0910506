package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// replicaMix is a mix small enough to populate in a second, timed.
func replicaMix(t *testing.T, targets string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "replicas.yaml")
	yaml := "name: replicas\ntargets:\n" + targets + "workloads:\n  - {type: mix, keyspace: 2000}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readsBy is a phase's reads per role, and the writes the replicas served.
func readsBy(p metrics.Phase) (primary, replicas, replicaWrites int64) {
	for _, n := range p.Nodes {
		if n.Role == "primary" {
			primary += n.Reads
			continue
		}
		replicas += n.Reads
		replicaWrites += n.Writes
	}
	return
}

// checkReplicaPhase checks what every replica set's mix phase must show:
// its nodes counted, writes on the primary alone, reads routed as the
// policy says, and a plausible lag sampled on loopback.
func checkReplicaPhase(t *testing.T, c result.Cell, policy string, replicas int) {
	t.Helper()
	if c.Status != result.CellOK || len(c.Phases) != 1 || c.Phases[0].Ops == 0 {
		t.Fatalf("cell %s: %s %s", c.ID, c.Status, c.Error)
	}
	p := c.Phases[0]
	if len(p.Nodes) != 1+replicas {
		t.Fatalf("%s: %d nodes counted, want %d: %+v", c.ID, len(p.Nodes), 1+replicas, p.Nodes)
	}
	primary, onReplicas, replicaWrites := readsBy(p)
	gets := p.ByOp["get"].Ops
	if replicaWrites != 0 || primary+onReplicas != gets || gets == 0 {
		t.Errorf("%s: reads %d on the primary + %d on replicas, %d gets; replica writes %d", c.ID, primary, onReplicas, gets, replicaWrites)
	}
	switch policy {
	case "replicas":
		if primary != 0 {
			t.Errorf("%s: the primary served %d reads under reads=replicas", c.ID, primary)
		}
	case "primary":
		if onReplicas != 0 {
			t.Errorf("%s: the replicas served %d reads under reads=primary", c.ID, onReplicas)
		}
	case "any":
		// Round-robin over the nodes: each gets its share, give or take a
		// client's first read.
		share := float64(primary) / float64(gets)
		if share < 0.8/float64(1+replicas) || share > 1.2/float64(1+replicas) {
			t.Errorf("%s: the primary served %d of %d reads under reads=any", c.ID, primary, gets)
		}
	}
	l := p.ReplicaLag
	if l == nil {
		t.Fatalf("%s: no replica lag; warnings %v", c.ID, p.Warnings)
	}
	// 1 s of samples every 100 ms, and one at each end.
	if l.Replicas != replicas || l.Streaming != replicas || l.Samples < 5 || l.TimedSamples == 0 {
		t.Errorf("%s: replica lag %+v", c.ID, *l)
	}
	// Loopback: well under a second behind, however busy the machine.
	if l.ReplayMs.Max <= 0 || l.ReplayMs.Max > 1000 || l.ReplayMs.P50 > l.ReplayMs.Max || l.Bytes.Max > 64<<20 {
		t.Errorf("%s: implausible lag %+v", c.ID, *l)
	}
}

// TestRunMixOnPostgresReplicas: a timed mix on managed replica sets, one
// per read policy but the default: reads go where the policy says (the
// replica serves none under reads=primary, about half under reads=any),
// writes to the primary alone, the lag is sampled, and the
// terminal and the HTML report show both; nothing is left behind.
func TestRunMixOnPostgresReplicas(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	// The default policy (reads=replicas) runs in TestRunPostgresReplicasByURL;
	// each managed replica set here costs seconds to start.
	scenario := replicaMix(t, "  - {store: postgres-replicas, options: {reads: primary}}\n  - {store: postgres-replicas, options: {reads: any}}\n")
	r, res := runResult(t, out, "run", scenario, "--duration", "1s", "--clients", "4", "--out", out, "--data-dir", data, "--quiet")
	for _, want := range []string{"ops per node", "replica lag"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the summary has no %s:\n%s", want, r.stdout)
		}
	}
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(res.Cells))
	}
	for i, policy := range []string{"primary", "any"} {
		checkReplicaPhase(t, res.Cells[i], policy, 1)
		// The client's threads are chosen by the managed nodes' model.
		if why := res.Cells[i].ClientThreadsWhy; !strings.Contains(why, "postgres serves each connection on a process of its own") {
			t.Errorf("%s: client threads chosen as %q", res.Cells[i].ID, why)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "report.html"))
	if len(matches) != 1 {
		t.Fatalf("no report.html under %s", out)
	}
	html, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Replica lag", "Ops per node", `data-m="replay_max_ms"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, tg := range res.Targets {
		if tg.ServerPID == 0 || tg.Settings["cluster_nodes"] != "2" || tg.Settings["replicas"] != "1" {
			t.Errorf("target %s: pid %d, settings %v", tg.Name, tg.ServerPID, tg.Settings)
		}
	}
	nothingLeftIn(t, data)
}

// nothingLeftIn checks that a run left no process and no file in its data dir.
func nothingLeftIn(t *testing.T, data string) {
	t.Helper()
	if procs := servertest.ProcessesUnder(data); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}

// TestRunPostgresReplicasByURL: a primary and two replicas of the user's
// own, named by one postgres-replicas:// URL with a password: the same
// routing and lag as managed, and the password reaches no output.
func TestRunPostgresReplicasByURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	primary := servertest.Start(t, server.Postgres, server.Options{})
	// Both replicas at once: each pg_basebackup and start takes seconds.
	addrs := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range addrs {
		base := servertest.BaseDir(t)
		wg.Go(func() {
			replica, err := server.StartReplica(ctx, primary, server.Options{BaseDir: base})
			if err != nil {
				errs[i] = err
				return
			}
			t.Cleanup(func() { replica.Stop(context.Background()) })
			addrs[i] = replica.Addr
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Trust authentication: the password is accepted, and never to be printed.
	url := "postgres-replicas://storebench:hunter2@" + primary.Addr + "," + strings.Join(addrs, ",") + "/storebench?sslmode=disable"
	out := t.TempDir()
	// The scenario's small keyspace, with the URL on the command line (as
	// a user types it): the default 100,000 keys took most of the test.
	r, res := runResult(t, out, "run", replicaMix(t, "  - postgres\n"), "--stores", url, "--duration", "1s", "--clients", "4", "--out", out)
	if len(res.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(res.Cells))
	}
	checkReplicaPhase(t, res.Cells[0], "replicas", 2)
	for _, n := range res.Cells[0].Phases[0].Nodes {
		if n.Role == "replica" && n.Reads == 0 {
			t.Errorf("replica %s served no reads: round-robin over both replicas", n.Addr)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "*"))
	leaked := []string{r.stdout, r.stderr}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err == nil {
			leaked = append(leaked, string(b))
		}
	}
	for _, format := range []string{"text", "md", "csv", "html"} {
		rep := storebench(t, nil, "report", filepath.Dir(matches[0]), "--format", format)
		leaked = append(leaked, rep.stdout, rep.stderr)
	}
	for i, text := range leaked {
		if strings.Contains(text, "hunter2") {
			t.Errorf("output %d holds the password", i)
		}
	}
}

// TestReplicaRefusals: what a replica set cannot be or do is refused before
// any work, one line, exit 2, the limit and its reason said.
func TestReplicaRefusals(t *testing.T) {
	closed, closed2 := closedPort(t), closedPort(t)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"no replicas", []string{"run", "kv", "--stores", "postgres-replicas:replicas=0"}, []string{"replicas=0", "want 1 to 8"}},
		{"too many replicas", []string{"run", "kv", "--stores", "postgres-replicas:replicas=9"}, []string{"replicas=9", "want 1 to 8", "beside the client"}},
		{"two primaries", []string{"run", "kv", "--stores", "postgres-replicas:nodes=2"}, []string{`unknown option "nodes"`, "design, reads, replicas"}},
		{"unknown read policy", []string{"run", "kv", "--stores", "postgres-replicas:reads=nearest"}, []string{"unknown read policy", "replicas, primary, any"}},
		{"replicas on postgres", []string{"run", "kv", "--stores", "postgres:replicas=1"}, []string{"postgres is one server", "postgres-replicas:replicas="}},
		{"replicas on mariadb", []string{"run", "kv", "--stores", "mariadb:replicas=1"}, []string{"mariadb cannot have replicas", "postgres-replicas"}},
		{"reads on redis-cluster", []string{"run", "kv", "--stores", "redis-cluster:reads=any"}, []string{`unknown option "reads"`}},
		{"sessions", []string{"run", "sessions", "--stores", "postgres-replicas"}, []string{"postgres-replicas does not support workload sessions"}},
		{"payments", []string{"run", "payments", "--stores", "postgres-replicas"}, []string{"postgres-replicas does not support workload payments"}},
		{"durability", []string{"run", "durability", "--stores", "postgres-replicas"}, []string{"postgres-replicas", "no automatic failover"}},
		{"pipeline", []string{"run", "throughput", "--stores", "postgres-replicas", "--pipeline", "8"}, []string{"postgres-replicas"}},
		{"one host", []string{"run", "kv", "--stores", "postgres-replicas://u:hunter2@127.0.0.1:" + closed + "/db"}, []string{"one host", "list the primary, then its replicas"}},
		{"replica down", []string{"run", "kv", "--stores", "postgres-replicas://u:hunter2@127.0.0.1:" + closed + ",127.0.0.1:" + closed2 + "/db"}, []string{"node 1 of 2", "does not answer"}},
		{"bad replica port", []string{"run", "kv", "--stores", "postgres-replicas://u:hunter2@127.0.0.1:" + closed + ",127.0.0.1:x/db"}, []string{"port is not a number"}},
		{"replicas of a URL", []string{"run", "kv", "--stores", "postgres-replicas://u:hunter2@127.0.0.1:" + closed + ",127.0.0.1:" + closed2 + "/db?sslmode=nope"}, []string{"sslmode"}},
	} {
		t.Run(c.name, func(t *testing.T) { refusesBadInput(t, nil, c.args, c.want) })
	}
	dir := t.TempDir()
	yaml := filepath.Join(dir, "unlogged.yaml")
	if err := os.WriteFile(yaml, []byte("name: x\ntargets:\n  - {store: postgres-replicas, options: {design: unlogged}}\nworkloads:\n  - type: kv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("unlogged", func(t *testing.T) {
		refusesBadInput(t, nil, []string{"run", yaml}, []string{"design unlogged", "not replicated"})
	})
	external := filepath.Join(dir, "external.yaml")
	if err := os.WriteFile(external, []byte("name: x\ntargets:\n  - {url: \"postgres-replicas://u:hunter2@127.0.0.1:"+closed+",127.0.0.1:"+closed2+"/db\", options: {replicas: \"2\"}}\nworkloads:\n  - type: kv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("replicas option on a URL", func(t *testing.T) {
		refusesBadInput(t, nil, []string{"run", external}, []string{"option replicas configures a managed"})
	})
}
