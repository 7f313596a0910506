package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// ReplicasScheme is the URL scheme of a primary with its streaming
// replicas: postgres-replicas://[user:password@]primary:port,replica:port…/db[?params],
// the primary first. One user and password serve every node, as physical
// replication copies the primary's roles to its replicas.
const ReplicasScheme = "postgres-replicas"

// MaxReplicas bounds a replica set given by URL, as the managed form
// (server.MaxPostgresReplicas): a longer list is more likely a mistake.
const MaxReplicas = 8

// Read policies: where a replica set's reads go. Writes always go to the
// primary.
const (
	// ReadsReplicas sends every read to the replicas, round-robin (the default).
	ReadsReplicas = "replicas"
	// ReadsPrimary sends every read to the primary: the replicas serve none.
	ReadsPrimary = "primary"
	// ReadsAny spreads reads over the primary and the replicas, round-robin.
	ReadsAny = "any"
)

// ReadPolicies lists the read policies, the default first.
var ReadPolicies = []string{ReadsReplicas, ReadsPrimary, ReadsAny}

// catchUpTimeout bounds waiting for the replicas to replay the primary's
// writes: a replica that is not streaming must not hold the run.
const catchUpTimeout = 60 * time.Second

// ReplicaConfig configures a replica set store.
type ReplicaConfig struct {
	URL       string // postgres-replicas://…
	Namespace string // the schema, created on the primary and replicated
	Design    string // as Config.Design; unlogged is refused (not replicated)
	Reads     string // a read policy; "" is ReadsReplicas
}

// Validate checks the config without connecting.
func (c ReplicaConfig) Validate() error {
	if _, err := replicaURLs(c.URL); err != nil {
		return fmt.Errorf("postgres replicas: bad URL %s: %w", store.SafeURL(c.URL), err)
	}
	return CheckReplicaOptions(c.Design, c.Reads)
}

// CheckReplicaOptions checks a replica set's design and read policy.
func CheckReplicaOptions(design, reads string) error {
	d, err := parseDesign(design)
	if err != nil {
		return err
	}
	if d.unlogged {
		return errors.New("postgres replicas: design unlogged: an UNLOGGED table is not replicated, so a replica cannot read it")
	}
	if reads != "" && !slices.Contains(ReadPolicies, reads) {
		// The value is not quoted: it may be a secret typed in the wrong place.
		return fmt.Errorf("postgres replicas: unknown read policy in reads=… (valid: %s)", strings.Join(ReadPolicies, ", "))
	}
	return nil
}

// CheckReplicasURL parses a replica set's URL as NewReplicas will, without
// connecting. Its errors quote no part of raw.
func CheckReplicasURL(raw string) error {
	_, err := replicaURLs(raw)
	return err
}

// replicaURLs splits a replica set's URL into one postgres:// URL per node,
// the primary's first, each checked as a single server's (CheckURL).
func replicaURLs(raw string) ([]string, error) {
	u, err := store.ParseSchemeURL(raw, ReplicasScheme)
	if err != nil {
		return nil, err
	}
	if u.Fragment != "" {
		return nil, errors.New("a #fragment means nothing to PostgreSQL")
	}
	hosts := strings.Split(u.Host, ",")
	switch {
	case len(hosts) < 2:
		return nil, fmt.Errorf("one host: list the primary, then its replicas (%s://user@primary:5432,replica:5432/db)", ReplicasScheme)
	case len(hosts)-1 > MaxReplicas:
		return nil, fmt.Errorf("%d replicas: at most %d", len(hosts)-1, MaxReplicas)
	}
	if err := store.CheckHostPorts(hosts, "node"); err != nil {
		return nil, err
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		node := url.URL{Scheme: "postgres", User: u.User, Host: h, Path: u.Path, RawQuery: u.RawQuery}
		out[i] = node.String()
		if err := CheckURL(out[i]); err != nil {
			return nil, fmt.Errorf("node %d of %d: %w", i+1, len(hosts), err)
		}
	}
	return out, nil
}

// ReplicaStore is one schema on a PostgreSQL primary, read through its
// streaming replicas. A client holds a connection to every node its reads
// or writes may go to: writes (Set, Delete, Add) go to the primary, reads
// round-robin over the policy's nodes. It counts at the client which node
// served how many reads and writes (store.NodeCounter): PostgreSQL's own
// counters cannot tell them apart (pg_stat_database's xact_commit counts
// every statement, ours and the sampling's alike, and pg_stat_statements is
// an extension a server may not load), while the client knows each op's
// node exactly.
type ReplicaStore struct {
	cfg      ReplicaConfig
	primary  *Store
	replicas []*Store // read-only: their admin connection reads replay positions
	readers  []int    // node indexes reads go to (0 is the primary)
	loc      string
	tallies  []nodeTally // per node: 0 the primary, then the replicas
	opened   atomic.Uint64
	requests atomic.Uint64 // per-request reads so far: their round-robin
	closeMu  sync.Mutex
	closed   bool
}

// nodeTally counts one node's ops, from every client.
type nodeTally struct{ reads, writes, other atomic.Int64 }

var (
	_ store.Store       = (*ReplicaStore)(nil)
	_ store.NodeCounter = (*ReplicaStore)(nil)
	_ store.Replicated  = (*ReplicaStore)(nil)
	_ store.Settler     = (*ReplicaStore)(nil)
)

// NewReplicas creates the schema on the primary (as New does), connects
// to every replica and waits until each has replayed it.
func NewReplicas(ctx context.Context, cfg ReplicaConfig) (_ *ReplicaStore, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Reads == "" {
		cfg.Reads = ReadsReplicas
	}
	urls, _ := replicaURLs(cfg.URL) // checked by Validate
	primary, err := New(ctx, Config{URL: urls[0], Namespace: cfg.Namespace, Design: cfg.Design})
	if err != nil {
		return nil, fmt.Errorf("primary: %w", err)
	}
	s := &ReplicaStore{cfg: cfg, primary: primary, tallies: make([]nodeTally, len(urls))}
	defer func() {
		if err != nil {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}()
	addrs := []string{primary.addr()}
	for i, u := range urls[1:] {
		r := replicaOf(primary, Config{URL: u, Namespace: cfg.Namespace, Design: cfg.Design})
		if r.admin, err = r.connect(ctx, false); err != nil {
			return nil, fmt.Errorf("replica %d: %w", i+1, err)
		}
		s.replicas = append(s.replicas, r)
		addrs = append(addrs, r.addr())
	}
	switch cfg.Reads {
	case ReadsPrimary:
		s.readers = []int{0}
	case ReadsAny:
		for i := range urls {
			s.readers = append(s.readers, i)
		}
	default:
		for i := range s.replicas {
			s.readers = append(s.readers, i+1)
		}
	}
	s.loc = (&url.URL{Scheme: ReplicasScheme, User: url.User(primary.pgcfg.User), Host: strings.Join(addrs, ","), Path: "/" + primary.pgcfg.Database}).String()
	if err := s.CatchUp(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// replicaOf is a Store on a replica that shares the primary's schema and
// statements: it creates nothing (a replica is read-only) and reads what
// the primary wrote.
func replicaOf(primary *Store, cfg Config) *Store {
	r := newStore(cfg)
	r.ddl, r.ddlStmts = primary.ddl, primary.ddlStmts
	r.getSQL, r.setSQL, r.delSQL, r.addSQL = primary.getSQL, primary.setSQL, primary.delSQL, primary.addSQL
	return r
}

// Replicas is how many replicas the store reads from or could.
func (s *ReplicaStore) Replicas() int { return len(s.replicas) }

// CatchUp waits until every replica has replayed the WAL the primary had
// written when it was called (pg_current_wal_lsn against each replica's
// pg_last_wal_replay_lsn, as PostgreSQL's own tests wait for a standby),
// within catchUpTimeout.
func (s *ReplicaStore) CatchUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	var target string
	if err := s.primary.withAdmin(ctx, func(ctx context.Context) error {
		return s.primary.admin.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&target)
	}); err != nil {
		return opErr("catch up: primary position", err)
	}
	for i, r := range s.replicas {
		for {
			var done bool
			err := r.withAdmin(ctx, func(ctx context.Context) error {
				return r.admin.QueryRow(ctx, `SELECT COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, target).Scan(&done)
			})
			if err != nil {
				return opErr(fmt.Sprintf("catch up: replica %d (%s)", i+1, r.addr()), err)
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return opErr(fmt.Sprintf("catch up: replica %d (%s) did not replay the primary's WAL up to %s", i+1, r.addr(), target), ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// withAdmin runs f on the store's admin connection, which it holds alone
// meanwhile.
func (s *Store) withAdmin(ctx context.Context, f func(ctx context.Context) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return f(ctx)
}

// replicationSQL is the primary's view of each streaming replica. The lag
// columns are NULL for a user without pg_read_all_stats, and a time lag
// is NULL once a caught-up replica has had nothing to replay for a while.
const replicationSQL = `SELECT COALESCE(host(client_addr), 'local') || ':' || COALESCE(client_port, 0)::text || ' ' || application_name,
	EXTRACT(epoch FROM write_lag)::float8, EXTRACT(epoch FROM flush_lag)::float8, EXTRACT(epoch FROM replay_lag)::float8,
	pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::int8
FROM pg_stat_replication`

// errLagHidden says why no lag could be read.
var errLagHidden = errors.New("pg_stat_replication shows this user no positions: grant it pg_read_all_stats (or pg_monitor)")

// ReplicaLag reads pg_stat_replication on the primary's admin connection.
func (s *ReplicaStore) ReplicaLag(ctx context.Context) ([]store.ReplicaLag, error) {
	var out []store.ReplicaLag
	err := s.primary.withAdmin(ctx, func(ctx context.Context) error {
		rows, err := s.primary.admin.Query(ctx, replicationSQL)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var write, flush, replay *float64
			var bytes *int64
			if err := rows.Scan(&name, &write, &flush, &replay, &bytes); err != nil {
				return err
			}
			if bytes == nil {
				return errLagHidden
			}
			l := store.ReplicaLag{Replica: name, Bytes: max(*bytes, 0)}
			switch {
			case replay != nil:
				l.TimeKnown = true
				l.Write, l.Flush, l.Replay = seconds(write), seconds(flush), seconds(replay)
			case l.Bytes == 0: // caught up and idle: PostgreSQL clears the times
				l.TimeKnown = true
			}
			out = append(out, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, opErr("replica lag", err)
	}
	return out, nil
}

func seconds(f *float64) time.Duration {
	if f == nil {
		return 0
	}
	return time.Duration(*f * float64(time.Second))
}

// NodeCounts is each node's ops counted at the client since the store opened.
func (s *ReplicaStore) NodeCounts(context.Context) ([]store.NodeCount, error) {
	out := make([]store.NodeCount, len(s.tallies))
	for i := range s.tallies {
		t := &s.tallies[i]
		n := store.NodeCount{Addr: s.nodeAddr(i), Role: "primary", Reads: t.reads.Load(), Writes: t.writes.Load(), Other: t.other.Load()}
		if i > 0 {
			n.Role = "replica"
		}
		out[i] = n
	}
	return out, nil
}

func (s *ReplicaStore) nodeAddr(i int) string {
	if i == 0 {
		return s.primary.addr()
	}
	return s.replicas[i-1].addr()
}

// Open connects a client to the primary (its three statements prepared, as
// Store.Open) and to every other node its reads go to (the read prepared).
func (s *ReplicaStore) Open(ctx context.Context) (_ store.Client, err error) {
	p, err := s.primary.Open(ctx)
	if err != nil {
		return nil, err
	}
	c := &ReplicaClient{store: s, primary: p.(*Client)}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	for _, node := range s.readers {
		if node == 0 {
			c.readers = append(c.readers, c.primary)
			continue
		}
		r, err := s.replicas[node-1].open(ctx, blockio.Use(ctx))
		if err != nil {
			return nil, fmt.Errorf("replica %d: %w", node, err)
		}
		c.readers = append(c.readers, r)
		prepared, err := r.pg.Prepare(ctx, r.get.Name, r.get.SQL, r.get.ParamOIDs)
		if err != nil {
			return nil, opErr("prepare "+r.get.Name+" on replica "+strconv.Itoa(node), err)
		}
		r.get = prepared
	}
	// Each client starts one node further, so the first reads of many
	// clients spread too.
	c.next = int(s.opened.Add(1) % uint64(len(c.readers)))
	return c, nil
}

// Info is the primary's, with the replica set's shape.
func (s *ReplicaStore) Info(ctx context.Context) (store.Info, error) {
	info, err := s.primary.Info(ctx)
	if err != nil {
		return info, err
	}
	info.Location = s.loc
	info.Settings["reads"] = s.cfg.Reads
	info.Settings["replicas"] = strconv.Itoa(len(s.replicas))
	info.Settings["client"] += "; a replica set: writes to the primary, reads " + map[string]string{
		ReadsReplicas: "round-robin over the replicas", ReadsPrimary: "to the primary", ReadsAny: "round-robin over the primary and the replicas",
	}[s.cfg.Reads] + " (a connection to each node per client)"
	info.Durability += "; replicas asynchronous: a read from one may not see the latest writes"
	return info, nil
}

// Reset empties the table on the primary (the replicas replay it).
func (s *ReplicaStore) Reset(ctx context.Context) error { return s.primary.Reset(ctx) }

// Settle settles the primary's table, then waits for the replicas.
func (s *ReplicaStore) Settle(ctx context.Context) error {
	if err := s.primary.Settle(ctx); err != nil {
		return err
	}
	return s.CatchUp(ctx)
}

// Close disconnects from the replicas and closes the primary's store
// (dropping the schema, which the replicas then drop too).
func (s *ReplicaStore) Close(ctx context.Context) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, r := range s.replicas {
		if err := store.EndOnce(&r.mu, &r.closed, func() error { return closeConn(r.admin, "close replica") }); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.primary.Close(ctx))
	return errors.Join(errs...)
}

var _ store.PerRequestOpener = (*ReplicaStore)(nil)

// OpenPerRequest returns a client for one operation that connects, when
// the operation comes, to the one node it goes to (the next reader of the
// policy, or the primary for a write) and runs it as an unnamed statement
// (Store.OpenPerRequest): what an application that connects per request
// pays, not a connection to every node.
func (s *ReplicaStore) OpenPerRequest(context.Context) (store.Client, error) {
	if store.Ended(&s.closeMu, &s.closed) {
		return nil, errClosed
	}
	return &requestClient{store: s}, nil
}

// requestClient is a per-request client of a replica set.
type requestClient struct {
	store *ReplicaStore
	conn  *Client // the node's, once the operation has connected
}

var _ store.KV = (*requestClient)(nil)

// connect opens the per-request connection to node i, counting op there.
func (c *requestClient) connect(ctx context.Context, node int, count func(*nodeTally)) (*Client, error) {
	if c.conn != nil {
		return nil, errors.New("postgres replicas: a per-request client runs one operation")
	}
	st := c.store.primary
	if node > 0 {
		st = c.store.replicas[node-1]
	}
	count(&c.store.tallies[node])
	cl, err := st.OpenPerRequest(ctx)
	if err != nil {
		return nil, err
	}
	c.conn = cl.(*Client)
	return c.conn, nil
}

func (c *requestClient) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	readers := c.store.readers
	node := readers[(c.store.requests.Add(1)-1)%uint64(len(readers))]
	conn, err := c.connect(ctx, node, func(t *nodeTally) { t.reads.Add(1) })
	if err != nil {
		return dst[:0], false, err
	}
	return conn.Get(ctx, key, dst)
}

func (c *requestClient) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	conn, err := c.connect(ctx, 0, func(t *nodeTally) { t.writes.Add(1) })
	if err != nil {
		return err
	}
	return conn.Set(ctx, key, val, ttl)
}

func (c *requestClient) Delete(ctx context.Context, key []byte) error {
	conn, err := c.connect(ctx, 0, func(t *nodeTally) { t.other.Add(1) })
	if err != nil {
		return err
	}
	return conn.Delete(ctx, key)
}

// Close closes the operation's connection, if it made one.
func (c *requestClient) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// ReplicaClient is a client of a replica set: the primary's client for
// writes, and one per node reads go to.
type ReplicaClient struct {
	store   *ReplicaStore
	primary *Client
	readers []*Client // in ReplicaStore.readers' order; the primary's may be one
	next    int
}

var (
	_ store.KV    = (*ReplicaClient)(nil)
	_ store.Adder = (*ReplicaClient)(nil)
)

// Get reads from the next node of the read policy, round-robin.
func (c *ReplicaClient) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	i := c.next
	c.next++
	if c.next == len(c.readers) {
		c.next = 0
	}
	c.store.tallies[c.store.readers[i]].reads.Add(1)
	return c.readers[i].Get(ctx, key, dst)
}

// Set writes on the primary.
func (c *ReplicaClient) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	c.store.tallies[0].writes.Add(1)
	return c.primary.Set(ctx, key, val, ttl)
}

// Add adds on the primary.
func (c *ReplicaClient) Add(ctx context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	c.store.tallies[0].writes.Add(1)
	return c.primary.Add(ctx, key, val, ttl)
}

// Delete deletes on the primary; counted apart from Set, as Redis's DEL is.
func (c *ReplicaClient) Delete(ctx context.Context, key []byte) error {
	c.store.tallies[0].other.Add(1)
	return c.primary.Delete(ctx, key)
}

// ClientIO says how the connections wait for their server.
func (c *ReplicaClient) ClientIO() string { return c.primary.ClientIO() }

// Close closes every connection of the client.
func (c *ReplicaClient) Close() error {
	errs := []error{c.primary.Close()}
	for _, r := range c.readers {
		if r != c.primary {
			errs = append(errs, r.Close())
		}
	}
	return errors.Join(errs...)
}

// PrimaryURL is the postgres:// URL of a replica set's primary, where its
// schemas are made and dropped.
func PrimaryURL(raw string) (string, error) {
	urls, err := replicaURLs(raw)
	if err != nil {
		return "", err
	}
	return urls[0], nil
}

var _ store.ServerTimer = (*ReplicaStore)(nil)

// ServerTime sums every node's pg_stat_statements over this store's
// statements (Store.ServerTime): the primary's writes and the reads each
// node executed. A node without the extension makes the whole unavailable:
// a sum missing a node would read as a faster server.
func (s *ReplicaStore) ServerTime(ctx context.Context) (store.ServerTime, error) {
	sum := store.ServerTime{Source: serverTimeSource + "; summed over the primary and its replicas", Ops: map[string]store.OpTime{}}
	for i, node := range append([]*Store{s.primary}, s.replicas...) {
		st, err := node.ServerTime(ctx)
		if err != nil {
			if i > 0 {
				return store.ServerTime{}, fmt.Errorf("replica %d (%s): %w", i, node.addr(), err)
			}
			return store.ServerTime{}, err
		}
		for op, t := range st.Ops {
			total := sum.Ops[op]
			total.Calls += t.Calls
			total.Total += t.Total
			sum.Ops[op] = total
		}
	}
	return sum, nil
}
