package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// ClusterScheme is the URL scheme of a Redis Cluster given by its seeds.
const ClusterScheme = "redis-cluster"

// MaxSeeds bounds a cluster URL's list of seed nodes: the client needs one
// that answers to learn the rest, and a longer list is more likely a
// mistake than a cluster.
const MaxSeeds = 64

// ClusterConfig configures a Redis Cluster store. Its fields are Config's;
// its URL is redis-cluster://[user:password@]host:port[,host:port…][/]
// [?protocol=2|3]: the seed nodes the client learns the cluster from.
type ClusterConfig Config

// Validate checks the config without connecting.
func (c ClusterConfig) Validate() error {
	return store.CheckServerConfig("redis cluster", c.URL, CheckClusterURL, store.CheckTimeout("redis cluster", c.Timeout), c.Namespace)
}

// CheckClusterURL parses a cluster URL as NewCluster will, without
// connecting. Its errors quote no part of raw.
func CheckClusterURL(raw string) error {
	_, err := parseClusterURL(raw)
	return err
}

// parseClusterURL reads the seed list and checks every part the way a
// single node's URL is checked (parseURL): the user, password and
// parameters are the first seed's URL's.
func parseClusterURL(raw string) (rueidis.ClientOption, error) {
	u, err := store.ParseSchemeURL(raw, ClusterScheme)
	if err != nil {
		return rueidis.ClientOption{}, err
	}
	if u.Path != "" && u.Path != "/" {
		return rueidis.ClientOption{}, errors.New("a path: a cluster has database 0 only, write host:port,host:port/")
	}
	if u.Fragment != "" {
		return rueidis.ClientOption{}, errors.New("a #fragment means nothing to a cluster")
	}
	seeds := strings.Split(u.Host, ",")
	if len(seeds) > MaxSeeds {
		return rueidis.ClientOption{}, fmt.Errorf("%d seed nodes: at most %d (the client learns the others from one)", len(seeds), MaxSeeds)
	}
	if err := store.CheckHostPorts(seeds, "seed node"); err != nil {
		return rueidis.ClientOption{}, err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return rueidis.ClientOption{}, errors.New("a parameter holds a '%' that starts no escape: write % as %25")
	}
	if _, ok := q["db"]; ok {
		return rueidis.ClientOption{}, errors.New("parameter db: a cluster has database 0 only")
	}
	first := url.URL{Scheme: "redis", User: u.User, Host: seeds[0], RawQuery: u.RawQuery}
	opt, err := parseURL(first.String())
	if err != nil {
		return opt, err
	}
	opt.InitAddress = seeds
	return opt, nil
}

// ClusterStore is one key prefix on a Redis Cluster. Its clients are
// *Client in cluster mode: rueidis's cluster client, one connection per
// node, each command routed by its key's slot; a batch (DoMulti) is split by
// slot, one pipeline per node. It offers what every node can do alone
// (KV, Add, batches, bulk load): no sessions (their scripts and
// multi-key commands span slots), no server time (INFO on one node) and
// no per-request connections (a command may be redirected).
type ClusterStore struct {
	keyspace // its admin client also serves NodeCounts
	cfg      ClusterConfig
	opt      rueidis.ClientOption
}

var (
	_ store.Store       = (*ClusterStore)(nil)
	_ store.NodeCounter = (*ClusterStore)(nil)
	_ store.KeyNoder    = (*ClusterStore)(nil)
)

// NewCluster connects to the cluster, learning its nodes from the seeds.
func NewCluster(ctx context.Context, cfg ClusterConfig) (*ClusterStore, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Timeout = defaultTimeout(cfg.Timeout)
	opt, _ := parseClusterURL(cfg.URL) // checked by Validate
	s := &ClusterStore{keyspace: newKeyspace(cfg.Namespace, cfg.URL), cfg: cfg, opt: opt}
	s.unlinkAll = s.deleteAll
	var err error
	if s.admin, err = s.connect(ctx, "storebench-admin:"+cfg.Namespace); err != nil {
		return nil, err
	}
	if s.admin.Mode() != rueidis.ClientModeCluster {
		s.admin.Close()
		return nil, fmt.Errorf("redis cluster: %s is not in cluster mode (cluster_enabled:0): use a redis:// URL", store.SafeURL(cfg.URL))
	}
	if err := s.readLimit(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *ClusterStore) connect(ctx context.Context, name string) (rueidis.Client, error) {
	opt := s.opt
	opt.InitAddress = append([]string(nil), s.opt.InitAddress...)
	synchronous(&opt, name, s.cfg.Timeout)
	return dial(ctx, opt, strings.Join(opt.InitAddress, ","))
}

// Open connects a new client: one connection to each node it sends to.
func (s *ClusterStore) Open(ctx context.Context) (store.Client, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	rc, err := s.connect(ctx, "storebench:"+s.cfg.Namespace)
	if err != nil {
		return nil, err
	}
	c := &Client{rc: rc, key: make([]byte, 0, 128), limit: s.limit, cluster: true}
	c.key = append(c.key, s.prefix...)
	c.n = len(c.key)
	return c, nil
}

// Info reads the version and persistence settings of one node (a managed
// cluster's nodes are checked alike by the server manager) and the
// cluster's shape from CLUSTER INFO.
func (s *ClusterStore) Info(ctx context.Context) (store.Info, error) {
	return s.info(ctx, "redis-cluster", "rueidis cluster client: one connection per node per client, commands routed by key slot, batches split by slot; no client-side cache, synchronous round trips", func(info *store.Info) error {
		info.Durability += ", on each primary"
		ci, err := s.admin.Do(ctx, s.admin.B().ClusterInfo().Build()).ToString()
		if err != nil {
			return opErr("info: CLUSTER INFO", err)
		}
		fields := infoFields(ci)
		for _, k := range []string{"cluster_state", "cluster_size", "cluster_known_nodes", "cluster_slots_assigned"} {
			info.Settings[k] = fields[k]
		}
		return nil
	})
}

// NodeCounts reads every node's INFO commandstats: GETs are reads, SETs
// writes, every other command Other.
func (s *ClusterStore) NodeCounts(ctx context.Context) ([]store.NodeCount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	var out []store.NodeCount
	var errs []error
	for addr, node := range s.admin.Nodes() {
		n, err := nodeCount(ctx, addr, node)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", addr, err))
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, errors.Join(errs...)
}

// KeyNodes reads CLUSTER SLOTS once: a key goes to the primary serving
// its slot (of the key as stored, under the namespace's prefix).
func (s *ClusterStore) KeyNodes(ctx context.Context) (func(key []byte) string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	ranges, err := s.admin.Do(ctx, s.admin.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return nil, opErr("CLUSTER SLOTS", err)
	}
	var owner [16384]string
	for _, r := range ranges {
		// [start, end, [ip, port, id, ...], replicas...]
		f, err := r.ToArray()
		if err != nil || len(f) < 3 {
			return nil, fmt.Errorf("redis: CLUSTER SLOTS: unexpected reply %v", r)
		}
		lo, err1 := f[0].AsInt64()
		hi, err2 := f[1].AsInt64()
		primary, err3 := f[2].ToArray()
		if err := errors.Join(err1, err2, err3); err != nil || len(primary) < 2 || lo < 0 || hi >= int64(len(owner)) || lo > hi {
			return nil, fmt.Errorf("redis: CLUSTER SLOTS: unexpected range %v", f)
		}
		ip, err1 := primary[0].ToString()
		port, err2 := primary[1].AsInt64()
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("redis: CLUSTER SLOTS: unexpected node %v: %w", primary, err)
		}
		addr := net.JoinHostPort(ip, strconv.FormatInt(port, 10))
		for slot := lo; slot <= hi; slot++ {
			owner[slot] = addr
		}
	}
	admin, prefix := s.admin, s.prefix
	return func(key []byte) string {
		// The client's own slot function, through a command it never sends.
		cmd := admin.B().Get().Key(prefix + string(key)).Build()
		return owner[cmd.Slot()]
	}, nil
}

func nodeCount(ctx context.Context, addr string, node rueidis.Client) (store.NodeCount, error) {
	n := store.NodeCount{Addr: addr, Role: "primary"}
	resps := node.DoMulti(ctx, node.B().Info().Section("commandstats").Build(), node.B().Info().Section("replication").Build())
	stats, err := resps[0].ToString()
	if err != nil {
		return n, err
	}
	repl, err := resps[1].ToString()
	if err != nil {
		return n, err
	}
	if infoFields(repl)["role"] == "slave" {
		n.Role = "replica"
	}
	for k, v := range infoFields(stats) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		calls := int64(0)
		for _, kv := range strings.Split(v, ",") {
			if c, ok := strings.CutPrefix(kv, "calls="); ok {
				calls, _ = strconv.ParseInt(c, 10, 64)
			}
		}
		switch name {
		case "get":
			n.Reads += calls
		case "set":
			n.Writes += calls
		default:
			n.Other += calls
		}
	}
	return n, nil
}

// deleteAll SCANs every node for the prefix (a replica lists its primary's
// keys again: unlinking twice is harmless) and UNLINKs what it finds through
// the cluster client, one key per command (keys of a batch lie in different
// slots), every key checked against the prefix first.
// A node that does not answer (killed) is reported, and the others are
// still cleaned.
func (s *ClusterStore) deleteAll(ctx context.Context) error {
	var errs []error
	for addr, node := range s.admin.Nodes() {
		errs = append(errs, s.deleteOn(ctx, addr, node))
	}
	return errors.Join(errs...)
}

func (s *ClusterStore) deleteOn(ctx context.Context, addr string, node rueidis.Client) error {
	pattern := s.prefix + "*"
	var cursor uint64
	for {
		e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return opErr("reset: scan "+addr, err)
		}
		cmds := make(rueidis.Commands, 0, len(e.Elements))
		for _, k := range e.Elements {
			if !strings.HasPrefix(k, s.prefix) {
				return fmt.Errorf("redis: reset: SCAN returned %q outside %q: %w", k, s.prefix, store.ErrNotOwned)
			}
			cmds = append(cmds, s.admin.B().Unlink().Key(k).Build())
		}
		for _, r := range s.admin.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return opErr("reset: unlink", err)
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}
