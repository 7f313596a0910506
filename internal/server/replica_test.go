package server_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// TestReplicaStreams: a row committed on the primary shows up on the
// replica, which is read-only; an UNLOGGED table exists there but cannot be
// read; Stop removes the replica's data dir.
func TestReplicaStreams(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	primary := servertest.Start(t, server.Postgres, server.Options{})
	replica, err := server.StartReplica(ctx, primary, server.Options{BaseDir: servertest.BaseDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Stop(context.Background())
	if replica.Settings["pg_is_in_recovery"] != "on" || replica.Settings["hot_standby"] != "on" {
		t.Errorf("replica settings: in recovery %q, hot_standby %q", replica.Settings["pg_is_in_recovery"], replica.Settings["hot_standby"])
	}
	// The replica times the reads it serves as the primary does.
	if got, want := replica.Settings["shared_preload_libraries"], primary.Settings["shared_preload_libraries"]; got != want {
		t.Errorf("replica shared_preload_libraries %q, the primary's %q", got, want)
	}
	p, err := pgx.Connect(ctx, primary.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for _, q := range []string{
		`CREATE TABLE logged_t (id int)`, `INSERT INTO logged_t VALUES (42)`,
		`CREATE UNLOGGED TABLE unlogged_t (id int)`, `INSERT INTO unlogged_t VALUES (42)`,
	} {
		if _, err := p.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r, err := pgx.Connect(ctx, replica.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	var got int
	testkit.WaitFor(10*time.Second, 20*time.Millisecond, func() bool {
		err = r.QueryRow(ctx, `SELECT id FROM logged_t`).Scan(&got)
		return err == nil
	})
	if err != nil || got != 42 {
		t.Fatalf("replica read of the logged table: %d, %v", got, err)
	}
	if _, err := r.Exec(ctx, `INSERT INTO logged_t VALUES (1)`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("write on the replica: %v, want a read-only error", err)
	}
	if err := r.QueryRow(ctx, `SELECT id FROM unlogged_t`).Scan(&got); err == nil || !strings.Contains(err.Error(), "unlogged") {
		t.Errorf("replica read of the unlogged table: %v, want PostgreSQL's refusal", err)
	}
	dir := replica.DataDir
	if err := replica.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("replica data dir %s still there after Stop: %v", dir, err)
	}
}

// TestReconfigure: a reloadable setting is applied without a restart, a
// restart-only one with; both are read back from the server, and reserved
// settings are refused.
func TestReconfigure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := servertest.Start(t, server.Postgres, server.Options{})
	// A reload applies autovacuum_naptime: the server keeps running.
	pid := s.PID
	if err := s.Reconfigure(ctx, map[string]string{"autovacuum_naptime": "3s"}); err != nil {
		t.Fatal(err)
	}
	if s.PID != pid || !s.Running() || s.Settings["autovacuum_naptime"] != "3s" {
		t.Errorf("after a reload: pid %d (was %d), running %v, naptime %q", s.PID, pid, s.Running(), s.Settings["autovacuum_naptime"])
	}
	// autovacuum_max_workers needs a restart.
	if err := s.Reconfigure(ctx, map[string]string{"autovacuum_max_workers": "6", "autovacuum_naptime": "2s"}); err != nil {
		t.Fatal(err)
	}
	if s.PID == pid {
		t.Error("autovacuum_max_workers applied without a restart")
	}
	if s.Settings["autovacuum_max_workers"] != "6" || s.Settings["autovacuum_naptime"] != "2s" {
		t.Errorf("settings after reconfigure: %v / %v", s.Settings["autovacuum_max_workers"], s.Settings["autovacuum_naptime"])
	}
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, `SHOW autovacuum_max_workers`).Scan(&v); err != nil || v != "6" {
		t.Errorf("SHOW autovacuum_max_workers = %q, %v", v, err)
	}
	if err := s.Reconfigure(ctx, map[string]string{"port": "1"}); err == nil {
		t.Error("a reserved setting was accepted")
	}
}

// A restart that Reconfigure does on purpose never shows as a dead server,
// so the run's watchdog leaves the cell alone.
func TestReconfigureRestartKeepsRunning(t *testing.T) {
	s := servertest.Start(t, server.Postgres, server.Options{})
	pid := s.PID
	stop := make(chan struct{})
	sawDown := make(chan bool, 1)
	go func() {
		down := false
		for {
			select {
			case <-stop:
				sawDown <- down
				return
			default:
			}
			down = down || !s.Running()
			time.Sleep(time.Millisecond)
		}
	}()
	err := s.Reconfigure(context.Background(), map[string]string{"autovacuum_max_workers": "6"})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if <-sawDown {
		t.Error("Running was false during Reconfigure's restart")
	}
	if s.PID == pid {
		t.Errorf("autovacuum_max_workers should need a restart; pid stayed %d", pid)
	}
}

// A replica that fails to start is rolled back like any server: nothing of
// it is left in the base dir.
func TestReplicaStartFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	primary := servertest.Start(t, server.Postgres, server.Options{})
	base := servertest.BaseDir(t)
	replica, err := server.StartReplica(ctx, primary, server.Options{BaseDir: base, StartTimeout: time.Nanosecond})
	if err == nil {
		replica.Stop(context.Background())
		t.Fatal("a replica with a 1 ns start timeout started")
	}
	t.Logf("start failed as wanted: %v", err)
	left, rerr := os.ReadDir(base)
	if rerr != nil || len(left) != 0 {
		t.Errorf("after the failed start (%v), the base dir holds %v (%v)", err, left, rerr)
	}
}
