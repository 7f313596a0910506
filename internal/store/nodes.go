package store

import "context"

// NodeCounter is a store spread over several servers (a Redis Cluster, a
// memcached pool) that reads how many commands each server has served so
// far: the counts before and after a phase say which node served how many
// of its ops.
type NodeCounter interface {
	NodeCounts(ctx context.Context) ([]NodeCount, error)
}

// NodeCount is one server's command counters since it started.
type NodeCount struct {
	Addr string // host:port
	Role string // primary, replica or server (a pool's)
	// Reads and Writes count the data commands (GET, SET) it served;
	// Other every other one (DEL, the admin's own commands).
	Reads, Writes, Other int64
}

// KeyNoder is a store spread over several servers that says which server
// holds a key: a workload that kills one node (durability) tells the
// writes the node took with it from those the others kept. It reads the
// layout once, so that asking costs no round trip per key and stays off
// the write path.
type KeyNoder interface {
	// KeyNodes reads the current layout and returns the host:port of the
	// server each key goes to under it ("" for none). The layout is a
	// snapshot: a failover after the call does not change its answers.
	KeyNodes(ctx context.Context) (func(key []byte) string, error)
}
