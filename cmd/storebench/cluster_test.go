package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server/servertest"
)

// TestRunClusterTargets: kv of 10k keys on a managed Redis Cluster (3
// primaries, and 2 primaries with a replica each) and a memcached pool:
// every node's counters saw its share of the keys written and read back,
// and no process or directory of a cluster is left after the run.
func TestRunClusterTargets(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	r, res := runResult(t, out, "run", "kv", "--stores", "redis-cluster,redis-cluster:nodes=2,replicas=1,memcached-pool",
		"--keys", "10k", "--out", out, "--data-dir", data, "--quiet")
	if !strings.Contains(r.stdout, "ops per node") {
		t.Errorf("the summary has no ops per node:\n%s", r.stdout)
	}
	if len(res.Cells) != 3 {
		t.Fatalf("%d cells, want 3", len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Status != "ok" {
			t.Errorf("cell %s: %s %s", c.ID, c.Status, c.Error)
		}
		for _, p := range c.Phases {
			if p.Server == nil {
				t.Errorf("%s %s: no server cost for a managed cluster", c.ID, p.Name)
			}
			var primaries, sum int64
			for _, n := range p.Nodes {
				served := n.Writes
				if p.Name == "read" {
					served = n.Reads
				}
				if n.Role == "replica" {
					// A replica is sent its primary's writes, and no reads.
					if p.Name == "read" && n.Reads != 0 || p.Name == "write" && n.Writes == 0 {
						t.Errorf("%s %s: replica %s: %+v", c.ID, p.Name, n.Addr, n)
					}
					continue
				}
				primaries++
				sum += served
				// Slots and hashes spread 10k keys about evenly.
				if served < 10000/int64(len(p.Nodes)+1) {
					t.Errorf("%s %s: node %s served %d of 10000", c.ID, p.Name, n.Addr, served)
				}
			}
			wantNodes := map[string]int64{"redis-cluster": 3, "redis-cluster:nodes=2,replicas=1": 2, "memcached-pool": 3}[c.Target]
			if primaries != wantNodes || sum != 10000 {
				t.Errorf("%s %s: %d primaries served %d ops, want %d serving 10000: %+v", c.ID, p.Name, primaries, sum, wantNodes, p.Nodes)
			}
		}
	}
	for _, tg := range res.Targets {
		if tg.ServerPID == 0 || tg.Settings["cluster_nodes"] == "" || tg.Settings["server_binary"] == "" {
			t.Errorf("target %s: pid %d, settings %v", tg.Name, tg.ServerPID, tg.Settings)
		}
	}
	nothingLeftIn(t, data)
}

// TestRunMixOnClusters: a timed mix runs on each cluster form beside a
// single Redis, and only the cluster forms count ops per node.
func TestRunMixOnClusters(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	_, res := runResult(t, out, "run", "mix", "--stores", "redis-cluster,redis,memcached-pool", "--duration", "1s", "--clients", "4",
		"--out", out, "--data-dir", data, "--quiet")
	for _, c := range res.Cells {
		if c.Status != "ok" || len(c.Phases) != 1 || c.Phases[0].Ops == 0 {
			t.Fatalf("cell %s: %s %s", c.ID, c.Status, c.Error)
		}
		if got, want := len(c.Phases[0].Nodes), map[string]int{"redis": 0}[c.Target]; c.Target != "redis" && got != 3 || c.Target == "redis" && got != want {
			t.Errorf("%s: %d nodes counted", c.ID, got)
		}
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}

// TestClusterRefusals: what a cluster cannot do is refused before any
// work, one line, exit 2.
func TestClusterRefusals(t *testing.T) {
	closed, closed2 := closedPort(t), closedPort(t)
	dir := t.TempDir()
	yaml := filepath.Join(dir, "pool.yaml")
	if err := os.WriteFile(yaml, []byte("name: x\ntargets:\n  - {store: memcached-pool, options: {replicas: \"1\"}}\nworkloads:\n  - type: kv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"sessions", []string{"run", "sessions", "--stores", "redis-cluster"}, []string{"redis-cluster does not support workload sessions"}},
		{"durability on a cluster by URL", []string{"run", "durability", "--stores", "redis-cluster://u:hunter2@127.0.0.1:" + closed + "/"}, []string{"cluster given by URL", "cannot kill"}},
		{"durability power cut on a cluster", []string{"run", "durability", "--stores", "redis-cluster", "--fault", "power"}, []string{"--fault power", "redis-cluster is a cluster"}},
		{"stall", []string{"run", "hotkey", "--stores", "memcached-pool", "--duration", "2s", "--stall", "1s:500ms"}, []string{"stall", "memcached-pool is a cluster"}},
		{"network", []string{"run", "hotkey", "--stores", "redis-cluster", "--rtt", "1ms"}, []string{"redis-cluster is a cluster"}},
		{"too many replicas", []string{"run", "kv", "--stores", "redis-cluster:replicas=3"}, []string{"replicas=3", "0 to 2"}},
		{"too many nodes", []string{"run", "kv", "--stores", "memcached-pool:nodes=40"}, []string{"40 nodes: at most 16"}},
		{"pool replicas", []string{"run", yaml}, []string{`unknown option "replicas" for store memcached-pool`}},
		{"seeds do not answer", []string{"run", "kv", "--stores", "redis-cluster://u:hunter2@127.0.0.1:" + closed + ",127.0.0.1:" + closed2 + "/"}, []string{"none of the 2 seed nodes answers"}},
		{"bad seed", []string{"run", "kv", "--stores", "redis-cluster://u:hunter2@127.0.0.1:" + closed + ",127.0.0.1/"}, []string{"port is not a number"}},
	} {
		t.Run(c.name, func(t *testing.T) { refusesBadInput(t, nil, c.args, c.want) })
	}
}
