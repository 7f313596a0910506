package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cluster is a managed group of servers of one kind that clients use
// together: a Redis Cluster whose slots storebench assigns itself, or a
// pool of memcached servers over which the client hashes keys. Each node is
// a Server of its own (own data dir marked for clean, own port, own process
// group); the Cluster starts, inspects and stops them as one.
type Cluster struct {
	Kind Kind
	// Nodes are the primaries first, then the replicas: replica j of
	// primary i is Nodes[Primaries*(1+j)+i].
	Nodes     []*Server
	Primaries int
	// Replicas is the number of replicas of each primary (Redis only).
	Replicas int
	// Settings are the nodes' effective settings: the first node's, each
	// checked on every node (a node that differs adds "<addr>:<name>").
	Settings map[string]string
}

// ClusterOptions size a Cluster.
type ClusterOptions struct {
	Primaries int // 0 means DefaultPrimaries
	Replicas  int // per primary; Redis only
}

// Cluster bounds. Every node is a process on this machine, sharing its
// CPUs with the client: more nodes than this measure the scheduler, not the
// store.
const (
	DefaultPrimaries = 3
	MaxClusterNodes  = 16
	MaxReplicas      = 2
	// redisSlots is the Redis Cluster hash slot count.
	redisSlots = 16384
	// clusterNodeTimeout is how long a silent node takes to count as
	// failed (cluster-node-timeout, ms): short, so a killed node's slots
	// move to its replica within a measured run.
	clusterNodeTimeout = "2000"
)

// ClusterCrashLoss is CrashLoss for a cluster (or pool) of kind k whose
// nodes have the effective settings set, one node killed (the durability
// workload's node kill): what that node's keys lose, and nothing on the
// others'.
func (k Kind) ClusterCrashLoss(set map[string]string) (processCrash, powerLoss string) {
	switch k {
	case Redis, Valkey:
		if n, _ := strconv.Atoi(set["cluster_replicas_per_primary"]); n > 0 {
			return "the writes the killed primary acknowledged but had not yet sent to its replica (replication is asynchronous); nothing on the other nodes' keys",
				"as each primary's own persistence, plus the writes not yet replicated"
		}
		node, _ := k.CrashLoss(set)
		return "on the killed primary's keys, what a single redis loses with these settings (" + node + "); nothing on the other nodes' keys",
			"as each primary's own persistence"
	case Memcached:
		return "every write on the killed server's keys (memory only); nothing on the other servers' keys",
			"everything"
	}
	return "unknown", "unknown"
}

// CheckCluster checks a cluster's size before anything starts.
func CheckCluster(k Kind, co ClusterOptions) error {
	switch k {
	case Redis, Valkey, Memcached:
	case Postgres: // a primary and its streaming replicas
		return checkPostgresReplicas(co)
	default:
		return fmt.Errorf("%s cannot run as a cluster (redis, valkey and memcached can; postgres as a primary with replicas)", k)
	}
	p := co.Primaries
	if p == 0 {
		p = DefaultPrimaries
	}
	switch {
	case p < 1:
		return fmt.Errorf("cluster: %d nodes: want at least 1", p)
	case co.Replicas < 0 || co.Replicas > MaxReplicas:
		return fmt.Errorf("cluster: replicas=%d: want 0 to %d per primary", co.Replicas, MaxReplicas)
	case co.Replicas > 0 && k == Memcached:
		return errors.New("cluster: memcached has no replicas: a pool's servers are independent")
	case p*(1+co.Replicas) > MaxClusterNodes:
		return fmt.Errorf("cluster: %d nodes: at most %d, each a server process on this machine beside the client", p*(1+co.Replicas), MaxClusterNodes)
	}
	return nil
}

// StartCluster starts a cluster of kind k, every node with opts (profile,
// settings, CPUs), and for Redis joins the nodes, assigns the slots evenly
// over the primaries and attaches the replicas, then waits until every node
// says cluster_state:ok and agrees on the slot map. The caller must Stop
// it; StopAll reaches its nodes too.
func StartCluster(ctx context.Context, k Kind, opts Options, co ClusterOptions) (_ *Cluster, err error) {
	if err := CheckCluster(k, co); err != nil {
		return nil, err
	}
	if k == Postgres {
		return startPostgresReplicas(ctx, opts, co)
	}
	if co.Primaries == 0 {
		co.Primaries = DefaultPrimaries
	}
	c := &Cluster{Kind: k, Primaries: co.Primaries, Replicas: co.Replicas}
	defer func() {
		if err != nil {
			_ = c.Stop(context.WithoutCancel(ctx))
		}
	}()
	redis := k == Redis || k == Valkey
	for i := range co.Primaries * (1 + co.Replicas) {
		nodeOpts := opts
		if redis {
			bus, err := freePort()
			if err != nil {
				return nil, err
			}
			nodeOpts.Settings = maps.Clone(opts.Settings)
			if nodeOpts.Settings == nil {
				nodeOpts.Settings = map[string]string{}
			}
			maps.Copy(nodeOpts.Settings, map[string]string{
				"cluster-enabled": "yes", "cluster-config-file": "nodes.conf", "cluster-port": strconv.Itoa(bus),
				"cluster-node-timeout": clusterNodeTimeout,
				// The surviving primaries keep serving their slots when one
				// fails without a replica: a node kill costs its keys only.
				"cluster-require-full-coverage": "no",
				// A replica fails over however long since it last heard from
				// its primary: Redis 7.0 replicas whose link died with a
				// SIGKILLed primary report it down since the epoch
				// (master_link_down_since_seconds:-1) and refused to fail
				// over as "disconnected for longer than allowed".
				"cluster-replica-validity-factor": "0",
			})
		}
		p, err := resolve(k, nodeOpts)
		if err != nil {
			return nil, fmt.Errorf("start %s cluster: %w", k, err)
		}
		s, err := startPlan(ctx, k, p, nodeOpts, "node"+strconv.Itoa(i+1))
		if err != nil {
			return nil, fmt.Errorf("start %s cluster node %d: %w", k, i+1, err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	if redis {
		if err := c.formRedis(ctx); err != nil {
			return nil, fmt.Errorf("form %s cluster: %w", k, err)
		}
	}
	c.Settings = c.nodeSettings()
	return c, nil
}

// Addrs are the nodes' host:port, in Nodes' order.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// URL is what a client connects to: redis-cluster://a,b,c/ or
// memcached-pool://a,b,c/, every node a seed (a replica is one too: the
// client learns the slot map from any node).
func (c *Cluster) URL() string {
	switch c.Kind {
	case Memcached:
		return "memcached-pool://" + strings.Join(c.Addrs(), ",") + "/"
	case Postgres: // the primary first, as its clients route writes to it
		return "postgres-replicas://" + pgUser + "@" + strings.Join(c.Addrs(), ",") + "/" + pgDatabase + "?sslmode=disable"
	}
	return "redis-cluster://" + strings.Join(c.Addrs(), ",") + "/"
}

// Role says whether node i is a primary or a replica.
func (c *Cluster) Role(i int) string {
	if c.Kind == Memcached {
		return "server"
	}
	if i < c.Primaries {
		return "primary"
	}
	return "replica"
}

// Describe names the cluster for a report: its kind and its first node's
// process id.
func (c *Cluster) Describe() (kind string, pid int) {
	switch c.Kind {
	case Memcached:
		kind = "memcached-pool"
	case Postgres:
		kind = "postgres-replicas"
	default:
		kind = string(c.Kind) + "-cluster"
	}
	if len(c.Nodes) > 0 {
		pid = c.Nodes[0].PID
	}
	return kind, pid
}

// Kill SIGKILLs node i, as a crash would; Stop still removes its dir.
func (c *Cluster) Kill(i int) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("kill: no node %d in a cluster of %d", i, len(c.Nodes))
	}
	return c.Nodes[i].Kill()
}

// NodeCount is the number of nodes, replicas included.
func (c *Cluster) NodeCount() int { return len(c.Nodes) }

// Addr is node i's host:port.
func (c *Cluster) Addr(i int) string { return c.Nodes[i].Addr }

// NodeRunning reports whether node i is alive.
func (c *Cluster) NodeRunning(i int) bool { return c.Nodes[i].Running() }

// RestartNode starts killed node i again on its data dir and port: a
// Redis node rejoins from its nodes.conf (as a replica of the node that
// took its slots over, if one did); a memcached server comes back empty.
func (c *Cluster) RestartNode(ctx context.Context, i int) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("restart: no node %d in a cluster of %d", i, len(c.Nodes))
	}
	return c.Nodes[i].Restart(ctx)
}

// WaitHealthy waits until every node answers and, for Redis, every node
// says cluster_state:ok with all slots served, every node known, as many
// primaries as at the start (a restarted primary whose slots moved is a
// replica now), one slot map, and every replica's link to its primary up:
// a replica still in its first sync has nothing to fail over with.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	if c.Kind == Memcached {
		for _, n := range c.Nodes {
			if err := waitDial(ctx, n.Addr); err != nil {
				return fmt.Errorf("node %s: %w", n.Addr, err)
			}
		}
		return nil
	}
	return c.waitRedis(ctx, func(info map[string]string, slotMap, first string) bool {
		return info["cluster_state"] == "ok" && info["cluster_slots_ok"] == strconv.Itoa(redisSlots) &&
			info["cluster_known_nodes"] == strconv.Itoa(len(c.Nodes)) && info["cluster_size"] == strconv.Itoa(c.Primaries) &&
			(info["role"] != "slave" || info["master_link_status"] == "up") && slotMap == first
	})
}

// waitDial waits until addr accepts a connection.
func waitDial(ctx context.Context, addr string) error {
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %w", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Running reports how many nodes are alive.
func (c *Cluster) Running() int {
	n := 0
	for _, s := range c.Nodes {
		if s.Running() {
			n++
		}
	}
	return n
}

// Shutdown stops every node cleanly, in parallel, keeping the data dirs.
func (c *Cluster) Shutdown(ctx context.Context) error {
	return c.each(func(s *Server) error { return s.Shutdown(ctx) })
}

// Stop stops every node (killed ones included) and removes every data dir.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.each(func(s *Server) error { return s.Stop(ctx) })
}

func (c *Cluster) each(f func(*Server) error) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, s := range c.Nodes {
		wg.Go(func() { errs[i] = f(s) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nodeSettings is the first node's settings, plus "<addr>:<name>" for each
// setting another node has a different value for: every node is read back,
// and one configured unlike the others is recorded, not hidden.
func (c *Cluster) nodeSettings() map[string]string {
	if len(c.Nodes) == 0 {
		return nil
	}
	out := maps.Clone(c.Nodes[0].Settings)
	for _, n := range c.Nodes[1:] {
		for k, v := range n.Settings {
			if k == "cluster-port" || k == "port" {
				continue // differ by construction
			}
			if out[k] != v {
				out[n.Addr+":"+k] = v
			}
		}
	}
	delete(out, "cluster-port")
	out["cluster_nodes"] = strconv.Itoa(len(c.Nodes))
	out["cluster_primaries"] = strconv.Itoa(c.Primaries)
	if c.Kind != Memcached {
		out["cluster_replicas_per_primary"] = strconv.Itoa(c.Replicas)
	}
	return out
}

// formRedis makes a Redis Cluster of c.Nodes as redis-cli --cluster create
// does: distinct config epochs, slots split evenly over the primaries, every
// node met, replicas attached, then a wait until all agree.
func (c *Cluster) formRedis(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	ids := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		if err := respCall(ctx, n.Addr, func(rc *respConn) error {
			id, err := rc.do("CLUSTER", "MYID")
			if err != nil {
				return err
			}
			ids[i], _ = id.(string)
			_, err = rc.do("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
			if err != nil {
				return err
			}
			if i < c.Primaries {
				lo, hi := i*redisSlots/c.Primaries, (i+1)*redisSlots/c.Primaries-1
				_, err = rc.do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi))
			}
			return err
		}); err != nil {
			return fmt.Errorf("node %s: %w", n.Addr, err)
		}
	}
	if err := respCall(ctx, c.Nodes[0].Addr, func(rc *respConn) error {
		for _, n := range c.Nodes[1:] {
			host, port, _ := net.SplitHostPort(n.Addr)
			if _, err := rc.do("CLUSTER", "MEET", host, port, n.Settings["cluster-port"]); err != nil {
				return fmt.Errorf("meet %s: %w", n.Addr, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// A replica can only follow a primary it knows: wait for the meeting
	// to have spread.
	if err := c.waitRedis(ctx, func(info map[string]string, _, _ string) bool {
		return info["cluster_known_nodes"] == strconv.Itoa(len(c.Nodes))
	}); err != nil {
		return fmt.Errorf("nodes did not all meet: %w", err)
	}
	for i := c.Primaries; i < len(c.Nodes); i++ {
		primary := ids[i%c.Primaries]
		if err := respCall(ctx, c.Nodes[i].Addr, func(rc *respConn) error {
			_, err := rc.do("CLUSTER", "REPLICATE", primary)
			return err
		}); err != nil {
			return fmt.Errorf("replica %s: %w", c.Nodes[i].Addr, err)
		}
	}
	return c.WaitHealthy(ctx)
}

// waitRedis polls every node's CLUSTER INFO and its view of the slot map
// until ok holds on all of them in one round; first is the first node's
// view in that round, to check that all agree.
func (c *Cluster) waitRedis(ctx context.Context, ok func(info map[string]string, slotMap, first string) bool) error {
	var last string
	for {
		all := true
		first := ""
		for i, n := range c.Nodes {
			info, slotMap, err := clusterView(ctx, n.Addr)
			if i == 0 {
				first = slotMap
			}
			if err != nil || !ok(info, slotMap, first) {
				all = false
				last = fmt.Sprintf("node %s: cluster_state %s, %s known nodes, %s slots ok, role %s, primary link %s (err %v)",
					n.Addr, info["cluster_state"], info["cluster_known_nodes"], info["cluster_slots_ok"], info["role"], cmp.Or(info["master_link_status"], "-"), err)
				break
			}
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %s", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// clusterView is a node's CLUSTER INFO and its CLUSTER NODES reduced to
// what every node must agree on: each node's id, role, primary and slots.
func clusterView(ctx context.Context, addr string) (map[string]string, string, error) {
	info := map[string]string{}
	var lines []string
	err := respCall(ctx, addr, func(rc *respConn) error {
		state, err := rc.fields("CLUSTER", "INFO")
		if err != nil {
			return err
		}
		maps.Copy(info, state) // what was read, for the caller's message when the rest fails
		// The role and, on a replica, whether its link to its primary is up.
		replication, err := rc.info("replication")
		if err != nil {
			return err
		}
		maps.Copy(info, replication)
		reply, err := rc.do("CLUSTER", "NODES")
		if err != nil {
			return err
		}
		text, _ := reply.(string)
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			// <id> <ip:port@bus> <flags> <primary> <ping> <pong> <epoch> <link> <slot>...
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			role := "replica"
			if slices.Contains(strings.Split(f[2], ","), "master") {
				role = "primary"
			}
			lines = append(lines, strings.Join(append([]string{f[0], role, f[3]}, f[8:]...), " "))
		}
		return nil
	})
	sort.Strings(lines)
	return info, strings.Join(lines, "\n"), err
}

// respCall runs f on a fresh connection to addr.
func respCall(ctx context.Context, addr string, f func(*respConn) error) error {
	rc, err := respDial(ctx, addr)
	if err != nil {
		return err
	}
	defer rc.Close()
	return f(rc)
}

// Stats sums the nodes' resource use (Server.Stats): CPU, memory and I/O
// of every process of every node; the device's own counter once, as the
// nodes' dirs share one base dir. A dead node fails it, as one server's
// death fails Server.Stats.
func (c *Cluster) Stats() (ProcStats, error) {
	var sum ProcStats
	for i, n := range c.Nodes {
		st, err := n.Stats()
		if err != nil {
			return ProcStats{}, err
		}
		if i == 0 {
			sum.Device, sum.DeviceWriteBytes = st.Device, st.DeviceWriteBytes
		}
		sum.add(st)
	}
	return sum, nil
}
