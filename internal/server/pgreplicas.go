package server

import (
	"context"
	"fmt"
	"strconv"
)

// MaxPostgresReplicas bounds a managed PostgreSQL replica set: each replica
// is a postgres process tree on this machine beside the primary and the
// client, and replays every write of the primary; past 8 the run measures
// the machine's CPUs, not the routing of reads.
const MaxPostgresReplicas = 8

// checkPostgresReplicas checks a replica set's size: one primary, 1 to
// MaxPostgresReplicas streaming replicas.
func checkPostgresReplicas(co ClusterOptions) error {
	switch {
	case co.Primaries > 1:
		return fmt.Errorf("postgres replicas: nodes=%d: a replica set has one primary (writes go to it alone)", co.Primaries)
	case co.Replicas < 1 || co.Replicas > MaxPostgresReplicas:
		return fmt.Errorf("postgres replicas: replicas=%d: want 1 to %d (each a postgres on this machine replaying every write beside the client)", co.Replicas, MaxPostgresReplicas)
	}
	return nil
}

// startPostgresReplicas starts a primary, then co.Replicas hot standbys of
// it (StartReplica), as one Cluster: Nodes[0] is the primary.
func startPostgresReplicas(ctx context.Context, opts Options, co ClusterOptions) (_ *Cluster, err error) {
	c := &Cluster{Kind: Postgres, Primaries: 1, Replicas: co.Replicas}
	defer func() {
		if err != nil {
			_ = c.Stop(context.WithoutCancel(ctx))
		}
	}()
	p, err := resolve(Postgres, opts)
	if err != nil {
		return nil, fmt.Errorf("start postgres primary: %w", err)
	}
	primary, err := startPlan(ctx, Postgres, p, opts, "primary")
	if err != nil {
		return nil, fmt.Errorf("start postgres primary: %w", err)
	}
	c.Nodes = append(c.Nodes, primary)
	for i := range co.Replicas {
		r, err := StartReplica(ctx, primary, opts)
		if err != nil {
			return nil, fmt.Errorf("postgres replica %d: %w", i+1, err)
		}
		c.Nodes = append(c.Nodes, r)
	}
	c.Settings = c.nodeSettings()
	c.Settings["cluster_replicas_per_primary"] = strconv.Itoa(co.Replicas)
	return c, nil
}
