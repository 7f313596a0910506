package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// TestRunKVEveryStore is the core acceptance run on a small scale: every
// store, managed servers included, and a result whose cells carry every field.
func TestRunKVEveryStore(t *testing.T) {
	out := t.TempDir()
	r := storebench(t, nil, "run", "kv", "--stores", "memory,files,sqlite,postgres,redis,memcached",
		"--keys", "200,2000", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"kv write: total ms", "kv read: total ms", "memcached", "fsync every commit", "result: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("want one result.json, found %v", matches)
	}
	res, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	e := res.Environment
	if res.Status != result.StatusComplete || res.Seed == 0 || res.Storebench.GoVersion == "" || res.Storebench.Version == "" {
		t.Errorf("run header incomplete: status %s seed %d build %+v", res.Status, res.Seed, res.Storebench)
	}
	if e.CPUModel == "" || e.Cores == 0 || e.MemoryBytes == 0 || e.OS == "" || e.Kernel == "" || e.ClientCPUs == "" {
		t.Errorf("environment incomplete: %+v", e)
	}
	if len(res.Targets) != 6 {
		t.Fatalf("targets = %d, want 6", len(res.Targets))
	}
	for _, tg := range res.Targets {
		if tg.Version == "" || tg.Durability == "" || tg.Location == "" || len(tg.Settings) == 0 {
			t.Errorf("target %s incomplete: %+v", tg.Name, tg)
		}
		if tg.Store == "postgres" && tg.Settings["synchronous_commit"] != "on" {
			t.Errorf("postgres settings not read back: %v", tg.Settings)
		}
		if tg.Store == "redis" && tg.Settings["appendonly"] == "" {
			t.Errorf("redis settings not read back: %v", tg.Settings)
		}
	}
	if len(res.Cells) != 12 {
		t.Fatalf("cells = %d, want 12", len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Status != result.CellOK || c.Params["clients"] == nil || c.Params["seed"] == nil || c.Params["value_size"] == nil {
			t.Errorf("cell %s: status %s params %v error %s", c.ID, c.Status, c.Params, c.Error)
		}
		keys := int64(c.Params["keys"].(float64))
		for _, p := range c.Phases {
			l := p.LatencyUs
			if p.Ops != keys || p.DurationS <= 0 || p.ThroughputOpsS <= 0 || p.Histogram == "" || len(p.Errors) != 0 {
				t.Errorf("%s %s: ops %d duration %v throughput %v errors %v", c.ID, p.Name, p.Ops, p.DurationS, p.ThroughputOpsS, p.Errors)
			}
			if !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max*1.001 && l.Mean > 0) {
				t.Errorf("%s %s: percentiles out of order: %+v", c.ID, p.Name, l)
			}
			h, err := p.DecodeHistogram()
			if err != nil || h.TotalCount() != p.Ops {
				t.Errorf("%s %s: histogram decodes to %v counts (%v), want %d", c.ID, p.Name, h, err, p.Ops)
			}
			managed := c.Target == "postgres" || c.Target == "redis" || c.Target == "memcached"
			if managed != (p.Server != nil) {
				t.Errorf("%s %s: server cost %+v (managed %v)", c.ID, p.Name, p.Server, managed)
			}
		}
	}
	raw, _ := os.ReadFile(matches[0])
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil || generic["schema"] != result.Schema {
		t.Errorf("result is not a %s document: %v", result.Schema, err)
	}
}

// TestRunRedactsPasswords: a password in a target URL appears nowhere: not
// on the terminal, in result.json (its command too) or in report.html; nor
// one that is the whole user information (issue 28: Redis sends it as the
// password), nor one holding a comma (issue 28: the split of --stores
// quoted a piece of it).
func TestRunRedactsPasswords(t *testing.T) {
	for _, c := range []struct{ name, userinfo, secret string }{
		{"user and password", "u:hunter2", "hunter2"},
		{"user information alone", "S3cr3tLone", "S3cr3tLone"},
		{"a comma", "u:p%40ss,S3cr3tComma", "S3cr3tComma"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			db := filepath.Join(t.TempDir(), "x.db")
			// SQLite ignores the user info; the run succeeds and must still not echo it.
			r := storebench(t, nil, "run", "kv", "--stores", "sqlite://"+c.userinfo+"@"+db+",memory", "--keys", "10", "--out", out, "--quiet")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			texts := map[string]string{"stdout": r.stdout, "stderr": r.stderr}
			for _, f := range []string{"result.json", "report.html"} {
				matches, _ := filepath.Glob(filepath.Join(out, "*", f))
				if len(matches) != 1 {
					t.Fatalf("want one %s, found %v", f, matches)
				}
				raw, _ := os.ReadFile(matches[0])
				texts[f] = string(raw)
			}
			for name, s := range texts {
				if strings.Contains(s, c.secret) {
					t.Errorf("password in %s", name)
				}
			}
		})
	}
}

// TestPinnedPlacementIsRecorded: the client pinned to one CPU may still start
// a server pinned to another, and both placements land in the result.
func TestPinnedPlacementIsRecorded(t *testing.T) {
	out := t.TempDir()
	_, res := runResult(t, out, "run", "kv", "--stores", "redis", "--keys", "200", "--client-cpus", "0", "--server-cpus", "1",
		"--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	if res.Environment.ClientCPUs != "0" || res.Environment.ServerCPUs != "1" {
		t.Errorf("placement recorded as client %q server %q, want 0 and 1", res.Environment.ClientCPUs, res.Environment.ServerCPUs)
	}
	// One client CPU means one client thread unless --client-threads says otherwise.
	if res.Environment.GoMaxProcs != 1 {
		t.Errorf("GOMAXPROCS recorded as %d with --client-cpus 0, want 1", res.Environment.GoMaxProcs)
	}

	// A scenario's client_cpus and server_cpus do the same; a flag overrides them.
	file := filepath.Join(t.TempDir(), "pinned.yaml")
	body := "name: pinned\nclient_cpus: \"1\"\nserver_cpus: \"0\"\ntargets: [redis]\nworkloads:\n  - {type: kv, keys: [200]}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	_, res = runResult(t, out, "run", file, "--server-cpus", "1", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	if res.Environment.ClientCPUs != "1" || res.Environment.ServerCPUs != "1" {
		t.Errorf("scenario client_cpus 1, server_cpus 0 and --server-cpus 1: recorded client %q server %q, want 1 and 1",
			res.Environment.ClientCPUs, res.Environment.ServerCPUs)
	}
	// "none" unpins a side the scenario pins.
	out = t.TempDir()
	_, res = runResult(t, out, "run", file, "--client-cpus", "none", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	// Unpinned, the client may use whatever CPUs the test itself may (all of
	// them, recorded as a range, unless the test runs under taskset).
	if res.Environment.ClientCPUs == "1" || res.Environment.ServerCPUs != "0" || runtime.NumCPU() > 1 && res.Environment.GoMaxProcs == 1 {
		t.Errorf("scenario client_cpus 1, server_cpus 0 and --client-cpus none: recorded client %q server %q, GOMAXPROCS %d; want the client unpinned",
			res.Environment.ClientCPUs, res.Environment.ServerCPUs, res.Environment.GoMaxProcs)
	}
}

// TestClientThreadsAreRecorded: --client-threads sets the client's GOMAXPROCS,
// the result records it, and the summary names it.
func TestClientThreadsAreRecorded(t *testing.T) {
	out := t.TempDir()
	threads := runtime.NumCPU() + 1 // not the default, so the summary names it
	r, res := runResult(t, out, "run", "throughput", "--stores", "memory", "--clients", "4", "--ops", "2000",
		"--client-threads", strconv.Itoa(threads), "--out", out)
	if res.Environment.GoMaxProcs != threads {
		t.Errorf("GOMAXPROCS recorded as %d, want %d", res.Environment.GoMaxProcs, threads)
	}
	// Each cell records its choice; the summary names it and why.
	if !strings.Contains(r.stdout, fmt.Sprintf("memory: %d: --client-threads %d (user)", threads, threads)) {
		t.Errorf("summary does not name the client threads:\n%s", r.stdout)
	}

	// A scenario's client_threads does the same, and the flag overrides it.
	file := filepath.Join(t.TempDir(), "threads.yaml")
	body := fmt.Sprintf("name: threads\nclient_threads: %d\ntargets: [memory]\nworkloads:\n  - {type: throughput, keyspace: 100}\nload: {clients: 2, ops: 500}\n", threads)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		want  int
	}{{nil, threads}, {[]string{"--client-threads", "1"}, 1}} {
		out := t.TempDir()
		_, res := runResult(t, out, append([]string{"run", file, "--out", out, "--quiet"}, c.flags...)...)
		if res.Environment.GoMaxProcs != c.want {
			t.Errorf("scenario client_threads %d, flags %v: GOMAXPROCS recorded as %d, want %d", threads, c.flags, res.Environment.GoMaxProcs, c.want)
		}
	}
}

// TestReaderGoneCleansUp: a reader that closes storebench's output early
// (storebench run | head) does not kill it before it stops its server and
// removes its run directory, which Go's default for SIGPIPE would.
func TestReaderGoneCleansUp(t *testing.T) {
	out, data := t.TempDir(), servertest.BaseDir(t)
	cmd := exec.Command(testkit.Binary(t), "run", "kv", "--stores", "redis", "--keys", "200", "--out", out, "--data-dir", data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the reader is gone before the summary is written
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("storebench was killed by %v when its reader went away\n%s", ws.Signal(), stderr.String())
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json")); len(matches) != 1 {
		t.Errorf("result files: %v", matches)
	}
	if procs := servertest.ProcessesUnder(data); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}
