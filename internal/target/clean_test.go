package target

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// markAs writes a marker naming process p into a fresh dir under base.
func markAs(t *testing.T, base, name string, p owner.Process) string {
	t.Helper()
	dir := filepath.Join(base, name)
	if err := os.MkdirAll(filepath.Join(dir, "pgdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pgdata", "base"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(owner.Marker{Process: p, Made: time.Now().UTC(), What: "postgres data dir"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, owner.MarkerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLocalLeftovers(t *testing.T) {
	base := servertest.BaseDir(t)
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := owner.Self()
	dead.PID = exited.Process.Pid
	deadDir := markAs(t, base, "storebench-postgres-1", dead)
	liveDir := markAs(t, base, "storebench-postgres-2", owner.Self())
	elsewhere := owner.Self()
	elsewhere.Host += ".elsewhere"
	elsewhereDir := markAs(t, base, "storebench-run-3", elsewhere)
	// Named like ours, without a marker; and a marked dir named otherwise.
	unmarkedDir := filepath.Join(base, "storebench-redis-4")
	if err := os.Mkdir(unmarkedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	otherDir := markAs(t, base, "backups", dead)
	// A managed server that is up: its data dir is its run's, this test's.
	srv := servertest.Start(t, server.Memcached, server.Options{BaseDir: base})

	found, unmarked, err := LocalLeftovers(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(unmarked) != 1 || unmarked[0] != unmarkedDir {
		t.Errorf("unmarked = %v, want [%s]", unmarked, unmarkedDir)
	}
	want := map[string]bool{deadDir: true, liveDir: false, elsewhereDir: false, srv.DataDir: false}
	if len(found) != len(want) {
		t.Errorf("found %d leftovers, want %d: %+v", len(found), len(want), found)
	}
	for _, l := range found {
		stale, ok := want[l.Dir]
		if !ok {
			t.Errorf("unexpected leftover %s", l.What)
			continue
		}
		if l.Stale(0) != stale {
			t.Errorf("%s: stale %v (%v: %s), want %v", l.What, l.Stale(0), l.Owner, l.Why, stale)
		}
		if l.Dir == deadDir && (l.Bytes < 4096 || !strings.Contains(l.What, "postgres data dir")) {
			t.Errorf("dead run's dir: %+v", l)
		}
		if l.Dir == liveDir && l.Bytes != 0 {
			t.Errorf("a live run's dir was walked: %d bytes", l.Bytes)
		}
		if l.Dir == elsewhereDir && (l.Owner != owner.Unknown || !l.Stale(time.Nanosecond)) {
			t.Errorf("another host's dir: %v, stale with --older-than: %v", l.Owner, l.Stale(time.Nanosecond))
		}
		if l.Stale(0) {
			if err := l.Remove(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	for dir, stale := range want {
		if _, err := os.Stat(dir); (err == nil) == stale {
			t.Errorf("%s: exists %v after removing the stale ones", dir, err == nil)
		}
	}
	for _, dir := range []string{unmarkedDir, otherDir} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s, not storebench's to remove: %v", dir, err)
		}
	}
	// A live run's dir is refused even when asked directly.
	for _, l := range found {
		if l.Dir == liveDir {
			if err := l.Remove(context.Background()); err == nil {
				t.Errorf("removed a live run's dir %s", liveDir)
			}
		}
	}
}
