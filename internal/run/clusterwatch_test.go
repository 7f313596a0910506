package run

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/testkit"
	"github.com/storebench/storebench/internal/workload/all"
)

// TestDeadClusterNodeRestartsTheCluster: a node of a managed pool killed
// during one cell is not left dead for the next cells of the target: the
// run says so and starts the whole pool anew, so the next cell runs on
// every node, without errors.
func TestDeadClusterNodeRestartsTheCluster(t *testing.T) {
	needServer(t, server.Memcached)
	// The binary's pool, its clients given up on a dead node after a
	// second, so that the killed node shows within the cell.
	reg := kinds.All()
	pool := slices.IndexFunc(reg, func(k target.Kind) bool { return k.Name == "memcached-pool" })
	reg[pool].Open = func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
		return memcached.NewPool(ctx, memcached.PoolConfig{URL: a.URL, Namespace: a.Namespace, Timeout: time.Second})
	}
	s, err := scenario.Parse("test.yaml", strings.NewReader("name: t\ntargets: [memcached-pool]\nworkloads:\n  - {type: kv, keys: [1000, 2000]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, out := servertest.BaseDir(t), t.TempDir()
	p, err := NewPlan(context.Background(), reg, all.Types(), s, Options{DataDir: data, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var killed int
	obs := &recorder{onStart: func(i int) {
		if i != 0 {
			return
		}
		matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
		r, err := result.Read(matches[0])
		if err != nil || len(r.Targets) != 1 || r.Targets[0].ServerPID == 0 {
			t.Errorf("no managed pool recorded before its first cell: %v %+v", err, r)
			return
		}
		// The pool's first node: a crash during the cell.
		killed = r.Targets[0].ServerPID
		if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
			t.Error(err)
		}
		// Until the server manager has reaped it: a cell that fails at
		// once could otherwise end before the node counts as dead.
		testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return syscall.Kill(killed, 0) != nil })
		time.Sleep(50 * time.Millisecond)
	}}
	o, err := p.Execute(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Result.Cells) != 2 {
		t.Fatalf("cells %v, want 2", cellOrder(o.Result))
	}
	if !strings.Contains(strings.Join(obs.logs, "\n"), "1 of 3 nodes of memcached-pool are down after the cell") {
		t.Errorf("the run did not say the pool lost a node:\n%s", strings.Join(obs.logs, "\n"))
	}
	if ts := o.Result.Targets; len(ts) != 2 || ts[1].ServerPID == killed {
		t.Errorf("the second cell should run on a fresh pool: targets %+v", ts)
	}
	next := o.Result.Cells[1]
	if next.Status != result.CellOK || len(next.Phases) == 0 {
		t.Fatalf("cell after the kill: %s %s", next.Status, next.Error)
	}
	for _, ph := range next.Phases {
		if len(ph.Errors) > 0 || len(ph.Nodes) != 3 {
			t.Errorf("cell after the kill, phase %s: errors %v, %d nodes counted", ph.Name, ph.Errors, len(ph.Nodes))
		}
	}
}
