package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/server/servertest"
)

// nodeKillRun runs one durability trial on target (a managed cluster),
// checks the cell, the text and HTML reports and that nothing is left, and
// returns the trial.
func nodeKillRun(t *testing.T, target string) durability.Trial {
	t.Helper()
	out, data := t.TempDir(), servertest.BaseDir(t)
	scenario := filepath.Join(t.TempDir(), "nodekill.yaml")
	yaml := "name: nodekill\ntargets:\n  - " + target + "\nload:\n  clients: 4\nworkloads:\n  - type: durability\n" +
		"    durability: {trials: 1, min_acked: 500, kill_window: 500ms, recovery_timeout: 1m}\n"
	if err := os.WriteFile(scenario, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r, res := runResult(t, out, "run", scenario, "--out", out, "--data-dir", data)
	if len(res.Cells) != 1 || res.Cells[0].Status != result.CellOK || res.Cells[0].Durability == nil {
		t.Fatalf("cells: %+v", res.Cells)
	}
	s := res.Cells[0].Durability
	if s.Trials != 1 || len(s.PerTrial) != 1 || s.PerTrial[0].NodeKill == nil {
		t.Fatalf("durability summary: %+v", s)
	}
	tr := s.PerTrial[0]
	k := tr.NodeKill
	var outageErrors int64
	for _, n := range k.OutageErrors {
		outageErrors += n
	}
	// The nodes that were not killed lose nothing; the writers saw the outage.
	if k.LostOther != 0 || s.LostOtherNodes != 0 || k.AckedOther == 0 || k.AckedKilled == 0 || outageErrors == 0 {
		t.Errorf("node kill: %+v", k)
	}
	html, err := os.ReadFile(filepath.Join(filepath.Dir(firstResult(t, out)), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one node killed per trial", k.Node + " (" + k.Role + ")", k.Recovered} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the text report lacks %q:\n%s", want, r.stdout)
		}
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	nothingLeftIn(t, data)
	return tr
}

// firstResult is the run's result.json under out.
func firstResult(t *testing.T, out string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(m) != 1 {
		t.Fatalf("result files: %v", m)
	}
	return m[0]
}

// TestDurabilityKillsRedisClusterPrimary: one primary of a Redis Cluster
// with a replica each is SIGKILLed; its replica takes over after
// cluster-node-timeout (2 s), so the writes to its keys succeed again
// within seconds, with no restart, and nothing is lost on the other nodes.
func TestDurabilityKillsRedisClusterPrimary(t *testing.T) {
	tr := nodeKillRun(t, "redis-cluster:replicas=1")
	k := tr.NodeKill
	if k.Role != "primary" || k.Recovered != "failover" || k.OutageS != 0 {
		t.Errorf("node kill: %+v", k)
	}
	// A failover cannot come before cluster-node-timeout.
	if tr.RecoveryS < 2 || tr.RecoveryS > 15 {
		t.Errorf("recovery %.2f s, want the failover's 2-15 s", tr.RecoveryS)
	}
}

// TestDurabilityKillsMemcachedPoolServer: a memcached server of a pool is
// SIGKILLed and restarted by storebench after its outage: every write it
// acknowledged before its death is lost (it keeps nothing), none on the
// other servers.
func TestDurabilityKillsMemcachedPoolServer(t *testing.T) {
	tr := nodeKillRun(t, "memcached-pool")
	k := tr.NodeKill
	if k.Role != "server" || k.Recovered != "restart" || k.OutageS != 5 {
		t.Errorf("node kill: %+v", k)
	}
	if k.AckedKilledBeforeKill == 0 || k.LostKilled != k.AckedKilledBeforeKill {
		t.Errorf("lost %d of the %d writes the killed server acknowledged before its death, want all", k.LostKilled, k.AckedKilledBeforeKill)
	}
	if tr.RecoveryS < 5 || tr.RecoveryS > 15 {
		t.Errorf("recovery %.2f s, want the 5 s outage and the restart", tr.RecoveryS)
	}
}
