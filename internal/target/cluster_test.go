package target

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/redis"
)

// A node of a managed cluster killed mid-run: the keys of its slots fail
// by class (unavailable or timeout, never a wrong value), the other nodes'
// keys are still there and served, and Stop leaves no process and no dir.
func TestClusterNodeKill(t *testing.T) {
	reg := Registry{{Name: "redis-cluster", Server: server.Redis, Cluster: true, Schemes: []string{"redis-cluster"},
		ServerOptions: map[string]string{"nodes": "", "replicas": ""},
		Open: func(ctx context.Context, a OpenArgs) (store.Store, error) {
			return redis.NewCluster(ctx, redis.ClusterConfig{URL: a.URL, Namespace: a.Namespace, Timeout: time.Second})
		}}}
	base := servertest.BaseDir(t)
	ctx := context.Background()
	inst, err := reg.Start(ctx, Spec{Store: "redis-cluster", Profile: "none"}, StartArgs{Namespace: "sbt_clusterkill", BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	if inst.Cluster == nil || len(inst.Cluster.Nodes) != 3 || inst.Info.Settings["cluster_nodes"] != "3" {
		t.Fatalf("instance: cluster %v, settings %v", inst.Cluster, inst.Info.Settings)
	}
	c, err := inst.Store.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kv := c.(store.KV)
	const n = 300
	for i := range n {
		k := fmt.Appendf(nil, "k%d", i)
		if err := kv.Set(ctx, k, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := inst.Cluster.Kill(1); err != nil {
		t.Fatal(err)
	}
	var served, failed int
	for i := range n {
		k := fmt.Appendf(nil, "k%d", i)
		v, ok, err := kv.Get(ctx, k, nil)
		switch class := errclass.Classify(err); {
		case err == nil && ok && string(v) == string(k):
			served++
		case err != nil && (class == errclass.ClassUnavailable || class == errclass.ClassTimeout):
			failed++
		default:
			t.Fatalf("Get(%s) after a node kill = %q, %v, %v (class %s)", k, v, ok, err, class)
		}
	}
	// The killed node held a third of the slots.
	if served < n/2 || failed < n/5 {
		t.Errorf("after killing 1 of 3 nodes: %d keys served, %d failed, of %d", served, failed, n)
	}
	// Closing removes the keys of the nodes still up, and says which node
	// it could not reach (its keys went with it).
	if err := inst.Store.Close(ctx); err == nil || !strings.Contains(err.Error(), inst.Cluster.Nodes[1].Addr) {
		t.Errorf("close after a node kill: %v, want it to name the dead node", err)
	}
	for _, node := range []*server.Server{inst.Cluster.Nodes[0], inst.Cluster.Nodes[2]} {
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{node.Addr}, ForceSingleClient: true, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		keys, err := rc.Do(ctx, rc.B().Dbsize().Build()).AsInt64()
		rc.Close()
		if err != nil || keys != 0 {
			t.Errorf("node %s after close: %d keys, %v", node.Addr, keys, err)
		}
	}
	if err := inst.Stop(ctx); err != nil {
		t.Error(err)
	}
	if procs := servertest.ProcessesUnder(base); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
	if entries, _ := os.ReadDir(base); len(entries) > 0 {
		t.Errorf("left in the base dir: %v", entries)
	}
}
