package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// StartReplica starts a PostgreSQL streaming replica of primary, a running
// managed PostgreSQL server: pg_basebackup -R -X stream from the primary
// (which writes standby.signal and primary_conninfo), then postgres with
// hot_standby=on on a free loopback port, in a fresh data dir under
// opts.BaseDir. opts.Profile and opts.Settings configure it like a primary
// (hot standby needs max_connections and the like at least as high as the
// primary's, which the same profile gives). The caller must Stop it, before
// the primary; StopAll reaches it too.
func StartReplica(ctx context.Context, primary *Server, opts Options) (*Server, error) {
	if primary == nil || primary.Kind != Postgres {
		return nil, errors.New("start replica: the primary must be a managed postgres server")
	}
	if !primary.Running() {
		return nil, errors.New("start replica: the primary is not running")
	}
	p, err := resolve(Postgres, opts)
	if err != nil {
		return nil, fmt.Errorf("start postgres replica: %w", err)
	}
	basebackup := filepath.Join(filepath.Dir(p.bins.Server), "pg_basebackup")
	if !isExecutable(basebackup) {
		return nil, &MissingError{Kind: Postgres, Binary: "pg_basebackup", Env: EnvPostgresBin, Looked: []string{filepath.Dir(p.bins.Server)}}
	}
	p.d = replicaDriver{primary: primary, basebackup: basebackup}
	if p.want == nil {
		p.want = map[string]string{}
	}
	p.want["hot_standby"] = "on"
	if _, set := p.want["wal_retrieve_retry_interval"]; !set {
		// Reconnect within 100 ms, not 5 s, when the primary restarts
		// (a design that needs a restart-only setting restarts it).
		p.want["wal_retrieve_retry_interval"] = "100ms"
	}
	s, err := startPlan(ctx, Postgres, p, opts, "replica")
	if err != nil {
		return nil, fmt.Errorf("start postgres replica of %s: %w", primary.Addr, err)
	}
	return s, nil
}

// replicaDriver is postgresDriver for a hot standby made by pg_basebackup.
type replicaDriver struct {
	postgresDriver
	primary    *Server
	basebackup string
}

func (d replicaDriver) init(ctx context.Context, s *Server) error {
	if _, err := s.socketDir(); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(d.primary.Addr)
	if err != nil {
		return fmt.Errorf("primary address %q: %w", d.primary.Addr, err)
	}
	// -R: standby.signal and primary_conninfo; -X stream: the WAL needed to
	// start comes along; -c fast: checkpoint now rather than spread out.
	if err := s.run(ctx, "pg_basebackup", d.basebackup, "-h", host, "-p", port, "-U", pgUser,
		"-D", pgData(s), "-R", "-X", "stream", "-c", "fast", "--no-sync", "-w"); err != nil {
		return err
	}
	// As on the primary, whose extension the replica has by the backup:
	// the replica's own executor time of the reads it serves.
	preloadStatements(s)
	return nil
}

// setup has nothing to create: the replica has the primary's databases.
func (replicaDriver) setup(context.Context, *Server) error { return nil }

func (d replicaDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	return pgInspect(ctx, s, func(conn *pgx.Conn, set map[string]string) error {
		var recovery bool
		if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovery); err != nil {
			return err
		}
		if !recovery {
			return errors.New("the replica is not in recovery: it is no standby")
		}
		set["pg_is_in_recovery"] = "on"
		set["primary"] = d.primary.Addr
		return nil
	})
}

func (d replicaDriver) durability(map[string]string) string {
	return "hot standby of " + d.primary.Addr + ": streams the primary's WAL, read-only; UNLOGGED tables are not replicated"
}
