package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// redisReply sends one command and returns its reply: a status or bulk
// string, an integer as text; an error reply fails the test.
func redisReply(t *testing.T, addr string, args ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimRight(line, "\r\n")
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(line[1:])
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	case '-':
		t.Fatalf("%s %v: %s", addr, args, line)
	}
	return line[1:]
}

func clusterInfo(t *testing.T, addr string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(redisReply(t, addr, "CLUSTER", "INFO"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// A managed Redis Cluster is formed by storebench alone: every node says
// ok, knows every other, and the slots are split over the primaries; each
// node's dir carries the owner marker, and its settings are read back.
func TestRedisClusterForms(t *testing.T) {
	c := servertest.StartCluster(t, server.Redis, server.Options{Profile: "none"}, server.ClusterOptions{})
	if len(c.Nodes) != server.DefaultPrimaries {
		t.Fatalf("%d nodes, want %d", len(c.Nodes), server.DefaultPrimaries)
	}
	for _, n := range c.Nodes {
		info := clusterInfo(t, n.Addr)
		if info["cluster_state"] != "ok" || info["cluster_slots_assigned"] != "16384" || info["cluster_known_nodes"] != "3" || info["cluster_size"] != "3" {
			t.Errorf("node %s: %v", n.Addr, info)
		}
		if _, err := owner.ReadMarker(n.DataDir); err != nil {
			t.Errorf("node dir %s: %v", n.DataDir, err)
		}
		if n.Settings["cluster-enabled"] != "yes" || n.Settings["save"] != "" {
			t.Errorf("node %s settings read back: cluster-enabled %q save %q", n.Addr, n.Settings["cluster-enabled"], n.Settings["save"])
		}
	}
	if c.Settings["cluster_nodes"] != "3" || c.Settings["appendonly"] != "no" {
		t.Errorf("cluster settings: %v", c.Settings)
	}
	if want := "redis-cluster://" + strings.Join(c.Addrs(), ",") + "/"; c.URL() != want {
		t.Errorf("URL %q, want %q", c.URL(), want)
	}
}

// A killed primary's replica takes its slots over; RestartNode brings the
// node back and WaitHealthy returns once it serves again as the new
// primary's replica, its link up. Replicas are in sync as soon as the
// cluster has started (a replica still in its first sync has nothing to
// fail over with), and after WaitHealthy.
func TestRedisClusterFailoverAndRejoin(t *testing.T) {
	c := servertest.StartCluster(t, server.Redis, server.Options{Profile: "none"}, server.ClusterOptions{Primaries: 3, Replicas: 1})
	// replicas=1 gives each primary a replica that follows it (checked on
	// this cluster: a start with replicas costs seconds). Three primaries:
	// a failover needs a majority of them alive.
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	for i, n := range c.Nodes {
		info := clusterInfo(t, n.Addr)
		if info["cluster_state"] != "ok" || info["cluster_size"] != "3" || info["cluster_known_nodes"] != "6" {
			t.Errorf("node %s: %v", n.Addr, info)
		}
		repl := redisReply(t, n.Addr, "INFO", "replication")
		if want := map[string]string{"primary": "role:master", "replica": "role:slave"}[c.Role(i)]; !strings.Contains(repl, want) {
			t.Errorf("node %d (%s) is a %s, but INFO replication says:\n%s", i, n.Addr, c.Role(i), repl)
		}
	}
	replicaLinkUp := func(i int) {
		t.Helper()
		if repl := redisReply(t, c.Nodes[i].Addr, "INFO", "replication"); !strings.Contains(repl, "role:slave") || !strings.Contains(repl, "master_link_status:up") {
			t.Errorf("node %d is not a replica in sync:\n%s", i, repl)
		}
	}
	for i := c.Primaries; i < len(c.Nodes); i++ {
		replicaLinkUp(i)
	}
	if err := c.Kill(0); err != nil {
		t.Fatal(err)
	}
	// Node 0's replica is node Primaries (replica j of primary i is
	// Nodes[Primaries*(1+j)+i]).
	promoted := c.Nodes[c.Primaries].Addr
	if !testkit.WaitFor(30*time.Second, 100*time.Millisecond, func() bool {
		return strings.Contains(redisReply(t, promoted, "INFO", "replication"), "role:master")
	}) {
		t.Fatalf("replica %s did not take over within 30 s:\n%s", promoted, redisReply(t, promoted, "INFO", "replication"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.RestartNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	replicaLinkUp(0)
	if info := clusterInfo(t, c.Nodes[0].Addr); info["cluster_state"] != "ok" || info["cluster_size"] != "3" {
		t.Errorf("restarted node: %v", info)
	}
}

// Killing one node leaves the rest running, and Stop still removes every
// process and every node's dir.
func TestClusterKillThenStopLeavesNothing(t *testing.T) {
	for _, k := range []server.Kind{server.Redis, server.Memcached} {
		t.Run(string(k), func(t *testing.T) {
			base := servertest.BaseDir(t)
			c, err := server.StartCluster(context.Background(), k, server.Options{BaseDir: base}, server.ClusterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Kill(1); err != nil {
				t.Fatal(err)
			}
			if n := c.Running(); n != 2 {
				t.Errorf("%d nodes running after killing one of 3", n)
			}
			if err := c.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if left := servertest.ProcessesUnder(base); len(left) > 0 {
				t.Errorf("processes left: %v", left)
			}
			if ents, _ := os.ReadDir(base); len(ents) > 0 {
				t.Errorf("%d entries left in %s, first %s", len(ents), base, ents[0].Name())
			}
		})
	}
}

func TestCheckCluster(t *testing.T) {
	for _, tc := range []struct {
		k    server.Kind
		co   server.ClusterOptions
		want string
	}{
		{server.Redis, server.ClusterOptions{Primaries: 17}, "at most 16"},
		{server.Redis, server.ClusterOptions{Primaries: 6, Replicas: 2}, "18 nodes: at most 16"},
		{server.Redis, server.ClusterOptions{Replicas: 3}, "want 0 to 2"},
		{server.Memcached, server.ClusterOptions{Replicas: 1}, "no replicas"},
		{server.MariaDB, server.ClusterOptions{}, "cannot run as a cluster"},
		{server.Postgres, server.ClusterOptions{}, "replicas=0: want 1 to 8"},
		{server.Postgres, server.ClusterOptions{Replicas: 9}, "replicas=9: want 1 to 8"},
		{server.Postgres, server.ClusterOptions{Primaries: 2, Replicas: 1}, "one primary"},
		{server.Redis, server.ClusterOptions{Primaries: -1}, "at least 1"},
	} {
		err := server.CheckCluster(tc.k, tc.co)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckCluster(%s, %+v) = %v, want %q", tc.k, tc.co, err, tc.want)
		}
	}
	if err := server.CheckCluster(server.Redis, server.ClusterOptions{Primaries: 8, Replicas: 1}); err != nil {
		t.Error(err)
	}
}
