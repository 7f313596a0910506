package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/durability"
)

func TestDurabilityText(t *testing.T) {
	var none bytes.Buffer
	DurabilityText(&none, &result.Result{Cells: []result.Cell{{Target: "redis", Workload: "kv"}}})
	if none.Len() != 0 {
		t.Errorf("a result without durability cells printed %q", none.String())
	}
	all := &durability.Summary{Trials: 2, TrialsAsked: 2, Acked: 9000, Lost: 9000, LostMax: 5000, LostMean: 4500, LossTrials: 2, LostAllTrials: 2,
		WindowMaxS: 0.52, WindowMaxWrites: 5000, RecoveryMeanS: 0.02, RecoveryMaxS: 0.03,
		PerTrial: []durability.Trial{{Trial: 1, Acked: 5000, Lost: 5000, LostAll: true}, {Trial: 2, Acked: 4000, Lost: 4000, LostAll: true}},
		Verdict:  "lost every acknowledged write in 2 of 2 trials (9000 of 9000)", ProcessCrash: "everything: memory only", PowerLoss: "everything"}
	zero := &durability.Summary{Trials: 2, TrialsAsked: 2, Acked: 1500, RecoveryMeanS: 0.4, RecoveryMaxS: 0.6,
		Verdict: "lost no acknowledged write in 2 of 2 trials (1500 writes acknowledged)", ProcessCrash: "nothing committed", PowerLoss: "nothing committed, if the disk honours fsync",
		Filesystem: "tmpfs (memory: nothing on it survives a power loss, fsync or not)"}
	r := &result.Result{Cells: []result.Cell{
		{Target: "redis:none", Workload: "durability", Status: result.CellOK, Durability: all},
		{Target: "postgres", Workload: "durability", Status: result.CellOK, Durability: zero},
		{Target: "mariadb", Workload: "durability", Status: result.CellFailed, Error: "durability trial 2 of 2: restart mariadb: boom\nlog tail", Durability: &durability.Summary{Trials: 1, TrialsAsked: 2, Acked: 10}},
		{Target: "sqlite", Workload: "durability", Status: result.CellFailed, Error: "writer process: no"},
	}}
	var b bytes.Buffer
	DurabilityText(&b, r)
	out := b.String()
	for _, want := range []string{
		"redis:none", "2/2", "9,000", "5,000", "4,500", "5,000 / 4,000", "2 of 2", "0.52 s, 5,000 writes",
		"postgres", "1,500",
		"mariadb", "1/2", "mariadb failed: durability trial 2 of 2: restart mariadb: boom",
		"sqlite failed: writer process: no",
		"A process crash is not a power loss",
		"redis:none: lost every acknowledged write in 2 of 2 trials",
		"process crash: everything: memory only", "power loss:    everything",
		"data on tmpfs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "log tail") {
		t.Errorf("a failed cell's error printed beyond its first line:\n%s", out)
	}
	t.Log("\n" + out)
}

// TestDurabilityRecordedText: the reports print why a process crash is not
// a power loss as the result recorded it, not as today's binary words it,
// in every format.
func TestDurabilityRecordedText(t *testing.T) {
	const recorded = "A recorded explanation of what a SIGKILL leaves standing."
	r := &result.Result{Cells: []result.Cell{{Target: "redis:none", Workload: "durability", Status: result.CellOK,
		Durability: &durability.Summary{Trials: 1, TrialsAsked: 1, NotPowerLoss: recorded}}}}
	var text, md bytes.Buffer
	DurabilityText(&text, r)
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, recorded) || strings.Contains(out, durability.NotPowerLoss) {
			t.Errorf("%s: the recorded text is not the one shown:\n%s", name, out)
		}
	}
}

// A power-cut cell's filesystem cost is shown in every format beside its
// losses, its figures exact, so the FUSE filesystem's latency is not taken
// for the store's.
func TestDurabilityFSCost(t *testing.T) {
	cost := &durability.FSCost{Writes: 300, Plain: durability.Latency{P50: 12.5, P99: 40, Mean: 14}, Mount: durability.Latency{P50: 87.5, P99: 310, Mean: 95}}
	r := &result.Result{Cells: []result.Cell{
		{Target: "files", Workload: "durability", Status: result.CellOK, Durability: &durability.Summary{Trials: 1, TrialsAsked: 1, Fault: "power", FSCost: cost}},
		{Target: "sqlite", Workload: "durability", Status: result.CellOK, Durability: &durability.Summary{Trials: 1, TrialsAsked: 1}},
	}}
	var text, md, html, csv bytes.Buffer
	DurabilityText(&text, r)
	for _, write := range []struct {
		w  *bytes.Buffer
		fn func(io.Writer, *result.Result) error
	}{{&md, Markdown}, {&html, HTML}, {&csv, CSV}} {
		if err := write.fn(write.w, r); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
		for _, want := range []string{"p50 power-cut fs", "files (power cut)", "12.5", "87.5", "310", "not the store"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in the durability section:\n%s", name, want, out)
			}
		}
		if strings.Count(out, "p50 power-cut fs") != 1 {
			t.Errorf("%s: the filesystem cost table should have one header, for the one power-cut cell", name)
		}
	}
	if !strings.Contains(html.String(), `data-v="87.5"`) {
		t.Error("html: the mount's p50 is not an exact figure (data-v)")
	}
	for _, want := range []string{"durability_fs_mount_p50_us,87.5,us", "durability_fs_plain_p99_us,40,us", "durability_fs_writes,300,count"} {
		if !strings.Contains(csv.String(), want) {
			t.Errorf("csv: no %q:\n%s", want, csv.String())
		}
	}
}

// A store that did not recover is shown as a finding with its server's
// last log lines, in every format.
func TestDurabilityUnrecovered(t *testing.T) {
	r := &result.Result{Cells: []result.Cell{{Target: "postgres", Workload: "durability", Status: result.CellOK,
		Durability: &durability.Summary{Trials: 1, TrialsAsked: 3, Fault: "power",
			Unrecovered: &durability.Unrecovered{Trial: 2, Error: "restart postgres: server exited before answering\ncommand: postgres -D x",
				LogTail: "LOG:  starting\nFATAL:  database files are incompatible with server\n"}}}}}
	var text, md, html bytes.Buffer
	DurabilityText(&text, r)
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
		for _, want := range []string{"postgres (power cut) did not recover after trial 2", "server exited before answering", "FATAL:  database files are incompatible with server"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "command: postgres") {
			t.Errorf("%s: the error's further lines are shown; its first line and the log tail say it", name)
		}
	}
}

// A node kill's trial is shown in every format: the node, how its keys
// came back, the recovery, the outage's errors by class and the losses on
// the killed node and elsewhere; a loss on a node not killed is a finding.
func TestDurabilityNodeKill(t *testing.T) {
	kill := func(trial int, lostOther int64) durability.Trial {
		return durability.Trial{Trial: trial, Acked: 3000, Lost: 120 + lostOther, RecoveryS: 3.25, NodeKill: &durability.NodeKill{
			Node: "127.0.0.1:7001", Role: "primary", Recovered: "failover", OutageErrors: map[string]int64{"unavailable": 9224, "other": 7},
			AckedKilled: 1000, LostKilled: 120, AckedKilledBeforeKill: 900, AckedOther: 2000, LostOther: lostOther}}
	}
	r := &result.Result{Cells: []result.Cell{
		{Target: "redis-cluster:replicas=1", Workload: "durability", Status: result.CellOK, Durability: &durability.Summary{Trials: 1, TrialsAsked: 1, PerTrial: []durability.Trial{kill(1, 0)}}},
		{Target: "memcached-pool", Workload: "durability", Status: result.CellOK, Durability: &durability.Summary{Trials: 1, TrialsAsked: 1, LostOtherNodes: 4, PerTrial: []durability.Trial{kill(1, 4)}}},
		{Target: "redis", Workload: "durability", Status: result.CellOK, Durability: &durability.Summary{Trials: 1, TrialsAsked: 1, PerTrial: []durability.Trial{{Trial: 1}}}},
	}}
	var text, md, html, csv bytes.Buffer
	DurabilityText(&text, r)
	for _, write := range []struct {
		w  *bytes.Buffer
		fn func(io.Writer, *result.Result) error
	}{{&md, Markdown}, {&html, HTML}, {&csv, CSV}} {
		if err := write.fn(write.w, r); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
		for _, want := range []string{"one node killed per trial", "127.0.0.1:7001 (primary)", "failover", "3.25 s",
			"9,224 unavailable", "7 other", "120 of 900",
			"FINDING: memcached-pool trial 1 lost 4 acknowledged writes on nodes that were NOT killed"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in the durability section:\n%s", name, want, out)
			}
		}
		// One row per node-kill trial: the plain redis cell has none.
		if n := strings.Count(out, "127.0.0.1:7001 (primary)"); n != 2 {
			t.Errorf("%s: %d node-kill rows, want 2", name, n)
		}
		if strings.Contains(out, "FINDING: redis-cluster") {
			t.Errorf("%s: a finding for a cluster that lost nothing elsewhere", name)
		}
	}
	for _, want := range []string{"durability_node_lost_other,4,count", "durability_node_lost_killed,120,count", "durability_node_outage_errors,9231,count"} {
		if !strings.Contains(csv.String(), want) {
			t.Errorf("csv: no %q:\n%s", want, csv.String())
		}
	}
}
