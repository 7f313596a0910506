package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
)

// Instance is a target that is running: its store is open, and for a managed
// target its server is up.
type Instance struct {
	Spec   Spec
	Kind   Kind
	Store  store.Store
	Server *server.Server // nil for external and in-process targets, and clusters
	// Cluster is a managed cluster's nodes (Kind.Cluster); nil otherwise.
	Cluster *server.Cluster
	Info    store.Info

	url  string     // the server's own URL: a managed server's or the spec's
	args StartArgs  // what the store was opened with, to reopen it (network.go)
	path netem.Path // the network path in front of the server, while a cell asks for one
	// calibrated is the last network set up on path, with its calibration.
	calibrated *Network
}

// StartArgs are the run-wide settings a target needs to start.
type StartArgs struct {
	Namespace string
	RunDir    string // where in-process stores keep their files
	BaseDir   string // parent of managed servers' data dirs
	CPUs      string // CPU list to pin managed servers to
	// Network is how this run applies a cell's network (netem.Detect or
	// netem.Choose): the kernel path when KernelNetem, otherwise the proxy.
	// Its name is recorded in each cell that asks for one.
	Network netem.Mechanism
	// NoHiccup leaves out the hiccup meter (platform stalls beside every
	// phase; run --no-hiccup).
	NoHiccup bool
	// Keep leaves each target's data in place when it stops (store.Detacher):
	// run --keep, for targets named by URL.
	Keep bool
	// ServerBins are the users' own builds (run --server-bin, see
	// Registry.ParseServerBins): per server kind, the dir of its binaries,
	// used instead of the installed ones for every managed target of the kind.
	ServerBins map[server.Kind]string
}

// ExternalTimeout bounds how long an external server may take to answer.
const ExternalTimeout = 5 * time.Second

// Start brings the target up: starts a managed server when asked, opens the
// store and reads back what will be measured.
func (r Registry) Start(ctx context.Context, spec Spec, a StartArgs) (*Instance, error) {
	k, ok := r.Lookup(spec.Store)
	if !ok {
		return nil, r.unknownStore(spec.Store)
	}
	inst := &Instance{Spec: spec, Kind: k, args: a}
	url := spec.URL
	switch {
	case spec.Managed() && k.Cluster:
		c, err := server.StartCluster(ctx, k.Server, k.ServerOptionsFor(spec, a), k.ClusterOptionsFor(spec))
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", spec.Label(), err)
		}
		inst.Cluster = c
		url = c.URL()
	case spec.Managed() && k.Server != "":
		srv, err := server.Start(ctx, k.Server, k.ServerOptionsFor(spec, a))
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", spec.Label(), err)
		}
		inst.Server = srv
		url = srv.URL
	}
	inst.url = url
	openCtx := ctx
	if !spec.Managed() {
		var cancel context.CancelFunc
		openCtx, cancel = context.WithTimeout(ctx, ExternalTimeout)
		defer cancel()
	}
	st, err := k.Open(openCtx, OpenArgs{URL: url, Namespace: a.Namespace, RunDir: a.RunDir, Options: spec.Options})
	if err != nil {
		inst.stopServer(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s: %w", spec.Label(), err)
	}
	inst.Store = st
	info, err := st.Info(ctx)
	if err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s: read version and settings: %w", spec.Label(), err)
	}
	if srv := inst.Server; srv != nil || inst.Cluster != nil {
		var settings map[string]string
		if srv != nil {
			settings = srv.Settings
		} else {
			// Every node read back; the first one's binary and version
			// stand for all (one plan started them).
			settings, srv = inst.Cluster.Settings, inst.Cluster.Nodes[0]
		}
		// The server manager reads settings back right after start; the store adds its own
		// (schema, table design), so both go into the record.
		merged := map[string]string{}
		for k, v := range settings {
			merged[k] = v
		}
		for k, v := range info.Settings {
			merged[k] = v
		}
		// The binary that ran: which build was measured (--server-bin, a
		// version's dir, the distribution's).
		merged["server_binary"] = srv.Binary
		info.Settings = merged
		if info.Version == "" {
			info.Version = srv.Version
		}
	}
	inst.Info = info
	return inst, nil
}

// Stop closes the store (removing what it created, unless the run keeps
// it: StartArgs.Keep), then the network path in front of it (proxy, or
// namespace and links), and stops a managed server. The run calls it on
// every way out, Ctrl-C included.
func (i *Instance) Stop(ctx context.Context) error {
	var errs []error
	if i.Store != nil {
		closeStore := i.Store.Close
		if d, ok := i.Store.(store.Detacher); ok && i.args.Keep {
			closeStore = d.Detach
		}
		if err := closeStore(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", i.Spec.Label(), err))
		}
		i.Store = nil
	}
	if i.path != nil {
		if err := i.path.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the network path of %s: %w", i.Spec.Label(), err))
		}
		i.path = nil
	}
	if err := i.stopServer(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (i *Instance) stopServer(ctx context.Context) error {
	if i.Cluster != nil {
		err := i.Cluster.Stop(ctx)
		i.Cluster = nil
		if err != nil {
			return fmt.Errorf("stop %s cluster: %w", i.Spec.Label(), err)
		}
		return nil
	}
	if i.Server == nil {
		return nil
	}
	err := i.Server.Stop(ctx)
	i.Server = nil
	if err != nil {
		return fmt.Errorf("stop %s server: %w", i.Spec.Label(), err)
	}
	return nil
}

// Kept says what of the target's data stays after the run and where, e.g.
// "schema sb_… at postgres://me:xxxxx@db/app"; "" when nothing does.
func (i *Instance) Kept() string {
	if !i.args.Keep || i.Kind.Namespace == "" || i.Spec.Managed() {
		return ""
	}
	return fmt.Sprintf(i.Kind.Namespace, i.args.Namespace) + " at " + store.RedactURL(i.Spec.URL)
}

// ServerOptionsFor is what a managed server of this target is started with.
func (k Kind) ServerOptionsFor(spec Spec, a StartArgs) server.Options {
	o := server.Options{Profile: spec.Profile, Version: spec.Version, BinDir: a.ServerBins[k.Server], BaseDir: a.BaseDir, CPUs: a.CPUs}
	for name, v := range spec.Options {
		if _, ok := k.ServerOptions[name]; ok && !(k.Cluster && slices.Contains(ClusterOptionNames, name)) {
			if o.Settings == nil {
				o.Settings = map[string]string{}
			}
			o.Settings[name] = v
		}
	}
	return o
}

// ClusterOptionsFor sizes a managed cluster of this target from its
// options nodes and replicas (checked by CheckClusterOptions).
func (k Kind) ClusterOptionsFor(spec Spec) server.ClusterOptions {
	var co server.ClusterOptions
	co.Primaries, _ = strconv.Atoi(spec.Options["nodes"])
	co.Replicas = defaultReplicas(k.Server)
	if v, ok := spec.Options["replicas"]; ok {
		co.Replicas, _ = strconv.Atoi(v)
	}
	return co
}

// defaultReplicas is a cluster's replicas per primary when its target
// names none: a PostgreSQL replica set has one, a Redis Cluster none.
func defaultReplicas(k server.Kind) int {
	if k == server.Postgres {
		return 1
	}
	return 0
}

// CheckClusterOptions checks a cluster target's nodes and replicas options
// (numbers, within server.CheckCluster's bounds) before any work.
func CheckClusterOptions(k server.Kind, opts map[string]string) error {
	co := server.ClusterOptions{Replicas: defaultReplicas(k)}
	for name, n := range map[string]*int{"nodes": &co.Primaries, "replicas": &co.Replicas} {
		v, ok := opts[name]
		if !ok {
			continue
		}
		var err error
		if *n, err = strconv.Atoi(v); err != nil {
			// The value is not quoted: what is not a number may be a secret typed in the wrong place.
			return fmt.Errorf("option %s: want a whole number", name)
		}
		if name == "nodes" && *n < 1 { // 0 would mean the default
			return fmt.Errorf("option nodes=%d: want at least 1", *n)
		}
	}
	return server.CheckCluster(k, co)
}
