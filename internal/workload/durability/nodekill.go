package durability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// maxNodeOutage is how long a killed node without a replica to take its
// keys over stays down before storebench restarts it: long enough that the
// writers see the outage, short enough for a quick run.
const maxNodeOutage = 5 * time.Second

// probeKeys is how many probe keys a trial looks at to find one on every
// serving node (16384 slots or a hash over a few nodes: a few dozen do).
const probeKeys = 4096

// nodeCrasher kills one serving node of a managed cluster or pool per trial
// while the writers go on writing through the others. Recovery is the kill
// to the first successful write to a key of the killed node: after a
// replica's failover (Redis Cluster with replicas), or after storebench
// restarts the node (no replica, a memcached pool).
type nodeCrasher struct {
	st       store.Store
	kn       store.KeyNoder
	cl       workload.ClusterServer
	seed     uint64
	outage   time.Duration // kill → restart, when no replica takes over
	failover bool          // a replica takes the killed primary's keys over

	// The trial's, set by prepare.
	owner func(key []byte) string
	node  int
	addr  string
	probe []byte
}

func newNodeCrasher(env workload.Env, p Params) (*nodeCrasher, error) {
	kn, ok := env.Store.(store.KeyNoder)
	if !ok {
		return nil, fmt.Errorf("durability: store %s cannot say which node holds a key", env.Kind)
	}
	nk := &nodeCrasher{st: env.Store, kn: kn, cl: env.Cluster, seed: p.Seed, outage: min(p.RecoveryTimeout, maxNodeOutage)}
	for i := range env.Cluster.NodeCount() {
		nk.failover = nk.failover || env.Cluster.Role(i) == "replica"
	}
	return nk, nil
}

// prepare reads the cluster's layout and picks the trial's node: one of
// the nodes serving keys, by the seed and the trial, and a probe key it holds.
func (nk *nodeCrasher) prepare(ctx context.Context, trial int) error {
	owner, err := nk.kn.KeyNodes(ctx)
	if err != nil {
		return fmt.Errorf("read which node holds which key: %w", err)
	}
	probes := map[string][]byte{}
	for j := range probeKeys {
		key := []byte("durability:" + strconv.Itoa(trial) + ":probe:" + strconv.Itoa(j))
		if a := owner(key); a != "" && probes[a] == nil {
			probes[a] = key
		}
	}
	var serving []int
	for i := range nk.cl.NodeCount() {
		if probes[nk.cl.Addr(i)] != nil {
			serving = append(serving, i)
		}
	}
	if len(serving) == 0 {
		return errors.New("no node of the cluster serves keys")
	}
	// Its own stream: the kill moment's stays what it was without clusters.
	rng := rand.New(rand.NewPCG(nk.seed, uint64(trial)|1<<40))
	nk.owner, nk.node = owner, serving[rng.IntN(len(serving))]
	nk.addr = nk.cl.Addr(nk.node)
	nk.probe = probes[nk.addr]
	return nil
}

func (nk *nodeCrasher) clients(ctx context.Context, n int) ([]store.KV, func(), error) {
	return workload.OpenKV(ctx, nk.st.Open, n)
}

func (nk *nodeCrasher) kill() error { return nk.cl.Kill(nk.node) }

// recover writes the probe key until a write succeeds, restarting the node
// after nk.outage when no replica takes over; it returns the kill →
// success time and how the keys came back.
func (nk *nodeCrasher) recoverKeys(ctx context.Context, killedAt time.Time, timeout time.Duration) (time.Duration, string, error) {
	how := "failover"
	restartAt := time.NewTimer(nk.outage)
	defer restartAt.Stop()
	if nk.failover {
		restartAt.Stop()
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var last error
	for {
		if last = nk.probeWrite(ctx); last == nil {
			return time.Since(killedAt), how, nil
		}
		select {
		case <-ctx.Done():
			return 0, how, ctx.Err()
		case <-deadline.C:
			return 0, how, fmt.Errorf("no write to a key of the killed node %s succeeded within %v of the kill (%s): %w", nk.addr, timeout, how, last)
		case <-restartAt.C:
			how = "restart"
			if err := nk.cl.RestartNode(ctx, nk.node); err != nil {
				return 0, how, fmt.Errorf("restart node %s: %w", nk.addr, err)
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// probeWrite writes the probe key through a client of its own, opened
// anew so that it learns the cluster's layout as it is now.
func (nk *nodeCrasher) probeWrite(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := nk.st.Open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	kv, ok := c.(store.KV)
	if !ok {
		return store.ErrUnsupported
	}
	return kv.Set(ctx, nk.probe, []byte("probe"), 0)
}

// restart brings the killed node back if it is not yet (Redis: it rejoins
// as a replica of the node that took its slots over) and waits until the
// whole cluster serves again, so that the next trial starts whole.
func (nk *nodeCrasher) restart(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	if !nk.cl.NodeRunning(nk.node) {
		if err := nk.cl.RestartNode(ctx, nk.node); err != nil {
			return time.Since(t0), &notRecovered{err}
		}
	}
	if err := nk.cl.WaitHealthy(ctx); err != nil {
		return time.Since(t0), &notRecovered{fmt.Errorf("the cluster is not whole again after node %s's restart: %w", nk.addr, err)}
	}
	return time.Since(t0), nil
}

func (nk *nodeCrasher) readStore() store.Store { return nk.st }

func (nk *nodeCrasher) close() {}

func (nk *nodeCrasher) crash() string {
	then := fmt.Sprintf("storebench restarts it after %v (no replica takes its keys over)", nk.outage)
	if nk.failover {
		then = "its replica takes its slots over (failover after cluster-node-timeout); storebench restarts the node afterwards and it rejoins as a replica"
	}
	return "SIGKILL of one node serving keys (chosen by the seed per trial) while the writers go on writing through the others; " + then +
		"; recovery is the kill to the first successful write to a key of the killed node"
}

func (nk *nodeCrasher) dataDir() string { return "" }

func (nk *nodeCrasher) logTail() string { return "" }

// role is the killed node's role: it served keys, so a primary (a
// replica at the start may have been promoted since), or a pool's server.
func (nk *nodeCrasher) role() string {
	if r := nk.cl.Role(nk.node); r == "server" {
		return r
	}
	return "primary"
}

// onKilled says whether key was on the killed node when it was killed.
func (nk *nodeCrasher) onKilled(key []byte) bool { return nk.owner(key) == nk.addr }
