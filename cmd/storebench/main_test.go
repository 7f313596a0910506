package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// The end-to-end tests run the storebench binary, testkit.Binary, built
// once for them all.
func TestMain(m *testing.M) { testkit.Main(m) }

type runOut struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func storebench(t *testing.T, env []string, args ...string) runOut {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	r := runOut{stdout: so.String(), stderr: se.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run storebench: %v", err)
	}
	return r
}

// runResult runs storebench with args, which must write one result under
// out, fails t unless it exits 0, and returns the output and the result.
func runResult(t *testing.T, out string, args ...string) (runOut, *result.Result) {
	t.Helper()
	r := storebench(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("want one result.json under %s, found %v", out, matches)
	}
	res, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// TestBadInput: each bad input gets a one-line error naming the problem and
// exit code 2, before any work starts (no result directory appears).
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badYAML := write("bad.yaml", "name: x\ntargets: [memory\nworkloads: []\n")
	unknownField := write("unknown.yaml", "name: x\ntargets: [memory]\nworkloads:\n  - type: kv\n    keys: [10]\n    colour: blue\n")
	unknownTargetField := write("unknown-target.yaml", "name: x\ntargets:\n  - store: memory\n    flavour: x\nworkloads:\n  - type: kv\n")
	aFile := write("plain-file", "x")
	badOption := write("bad-option.yaml", "name: x\ntargets:\n  - {store: files, options: {fsync: maybe}}\nworkloads:\n  - type: kv\n")
	unknownOption := write("unknown-option.yaml", "name: x\ntargets:\n  - {store: redis, options: {colour: red}}\nworkloads:\n  - type: kv\n")
	badCPUs := write("bad-cpus.yaml", "name: x\nclient_cpus: \"64\"\ntargets: [memory]\nworkloads:\n  - type: kv\n")
	badThreads := write("bad-threads.yaml", "name: x\nclient_threads: -1\ntargets: [memory]\nworkloads:\n  - type: kv\n")
	badStall := write("bad-stall.yaml", "name: x\ntargets: [redis]\nworkloads:\n  - type: hotkey\n    load: {duration: 2s}\n    stall: {after: 1s, for: 0s}\n")
	closed := closedPort(t)
	privateDir := filepath.Join(dir, "private") // 0700 and owned by root: postgres runs as an unprivileged user
	if err := os.Mkdir(privateDir, 0o700); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"absurd rtt", nil, []string{"run", "kv", "--stores", "redis", "--rtt", "1h"}, []string{"rtt 1h0m0s: at most 500ms"}},
		{"bandwidth beyond int64", nil, []string{"run", "kv", "--stores", "redis", "--rtt", "1ms", "--bandwidth", "1e30gbit"}, []string{`bandwidth "1e30gbit": at most 100gbit`}},
		{"unknown store", nil, []string{"run", "kv", "--stores", "memory,mongo"}, []string{`unknown store "mongo"`, "memory, files, sqlite, postgres, redis, memcached, mariadb"}},
		{"unknown workload", nil, []string{"run", "nosuchworkload"}, []string{`"nosuchworkload"`, "workloads: kv"}},
		{"unknown profile", nil, []string{"run", "kv", "--stores", "redis:fast"}, []string{`unknown profile "fast" for redis`, "aof-always"}},
		{"malformed URL", nil, []string{"run", "kv", "--stores", "redis://h:6379:x:y/%zz"}, []string{"malformed URL"}},
		{"URL without host", nil, []string{"run", "kv", "--stores", "postgres:///db"}, []string{"no host:port"}},
		{"unknown URL scheme", nil, []string{"run", "kv", "--stores", "mongodb://127.0.0.1:27017"}, []string{`unknown URL scheme "mongodb"`}},
		{"password never printed", nil, []string{"run", "kv", "--stores", "redis://u:hunter2@127.0.0.1:" + closed}, []string{"xxxxx", "127.0.0.1:" + closed}},
		{"external server does not answer", nil, []string{"run", "kv", "--stores", "memcached://127.0.0.1:" + closed}, []string{"127.0.0.1:" + closed, "does not answer"}},
		{"managed binary missing", []string{"STOREBENCH_REDIS_SERVER=/nonexistent/redis-server"}, []string{"run", "kv", "--stores", "redis"}, []string{"redis-server", "apt-get install"}},
		{"zero keys", nil, []string{"run", "kv", "--stores", "memory", "--keys", "0"}, []string{"--keys", "positive"}},
		{"negative keys", nil, []string{"run", "kv", "--stores", "memory", "--keys", "10,-5"}, []string{"positive"}},
		{"zero clients", nil, []string{"run", "kv", "--stores", "memory", "--clients", "0"}, []string{"--clients must be at least 1; omit it for the default"}},
		{"zero repeats", nil, []string{"run", "kv", "--stores", "memory", "--repeat", "0"}, []string{"--repeat must be at least 1; omit it for the default, 1"}},
		{"zero duration", nil, []string{"run", "throughput", "--stores", "memory", "--duration", "0s"}, []string{"--duration 0s: a timed phase of no time measures nothing"}},
		{"key count twice", nil, []string{"run", "kv", "--stores", "memory", "--keys", "100,100"}, []string{"keys=100 twice"}},
		{"negative value size", nil, []string{"run", "kv", "--stores", "memory", "--value-size", "-1"}, []string{"--value-size must be positive"}},
		{"yaml does not parse", nil, []string{"run", badYAML}, []string{badYAML + ":"}},
		{"yaml unknown field", nil, []string{"run", unknownField}, []string{unknownField + ":6:", "colour"}},
		{"yaml unknown target field", nil, []string{"run", unknownTargetField}, []string{unknownTargetField + ":4:", "flavour"}},
		{"scenario file missing", nil, []string{"run", filepath.Join(dir, "nope.yaml")}, []string{"nope.yaml", "no such file"}},
		{"output dir not writable", nil, []string{"run", "kv", "--stores", "memory", "--keys", "10", "--out", filepath.Join(aFile, "sub")}, []string{"--out", "not a directory"}},
		{"unknown flag", nil, []string{"run", "--frobnicate"}, []string{"unknown flag: --frobnicate"}},
		{"data dir the server user cannot enter", nil, []string{"run", "kv", "--stores", "postgres", "--data-dir", privateDir}, []string{"postgres", privateDir}},
		{"client CPUs that do not exist in a scenario", nil, []string{"run", badCPUs}, []string{badCPUs + ": client_cpus", "64"}},
		{"negative client_threads in a scenario", nil, []string{"run", badThreads}, []string{badThreads, "client_threads -1"}},
		{"zero client threads", nil, []string{"run", "kv", "--stores", "memory", "--client-threads", "0"}, []string{"--client-threads must be at least 1; omit it for the default"}},
		{"server CPUs that do not exist", nil, []string{"run", "kv", "--stores", "redis", "--server-cpus", "64"}, []string{"--server-cpus", "64"}},
		{"bad store option value", nil, []string{"run", badOption}, []string{badOption + ":3:", `fsync="maybe"`}},
		{"unknown store option", nil, []string{"run", unknownOption}, []string{unknownOption + ":3:", `unknown option "colour"`}},
		{"stall of an in-process store", nil, []string{"run", "hotkey", "--stores", "memory", "--duration", "2s", "--stall", "1s:500ms"}, []string{"stall", "memory is an in-process store"}},
		{"stall of an external server", nil, []string{"run", "hotkey", "--stores", "redis://127.0.0.1:" + closed, "--duration", "2s", "--stall", "1s:500ms"}, []string{"stall", "external server"}},
		{"stall after the phase", nil, []string{"run", "hotkey", "--stores", "redis", "--duration", "2s", "--stall", "2s:500ms"}, []string{"stall", "after (2s) must fall inside the measured phase (duration 2s)"}},
		{"stall of a counted phase", nil, []string{"run", "hotkey", "--stores", "redis", "--stall", "1s:500ms"}, []string{"stall", "needs a timed phase"}},
		{"stall flag malformed", nil, []string{"run", "hotkey", "--stores", "redis", "--duration", "2s", "--stall", "500ms"}, []string{"--stall", "AFTER:FOR"}},
		{"stall of no time", nil, []string{"run", badStall}, []string{badStall + ":4:", "for must be positive"}},
		{"net mechanism unknown", nil, []string{"run", "hotkey", "--stores", "redis", "--rtt", "1ms", "--net-mechanism", "tc"}, []string{"--net-mechanism", "auto, netem or proxy"}},
	}
	// Asking for the kernel path where it cannot run is bad input; where it
	// can, internal/netem's kernel tests run it.
	if m := netem.Detect(context.Background()); !m.KernelNetem {
		cases = append(cases, struct {
			name      string
			env, args []string
			want      []string
		}{"netem asked without kernel netem", nil, []string{"run", "hotkey", "--stores", "redis", "--rtt", "1ms", "--net-mechanism", "netem"}, []string{"--net-mechanism", "kernel netem path cannot run here"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { refusesBadInput(t, c.env, c.args, c.want) })
	}
}

// refusesBadInput runs storebench with args (and --out, when they have
// none) and checks that it refuses them as bad input: exit code 2, one line
// saying each of want, no password, promptly, and no result directory.
func refusesBadInput(t *testing.T, env, args, want []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results")
	if !contains(args, "--out") {
		args = append(args, "--out", out)
	}
	r := storebench(t, env, args...)
	if r.code != 2 {
		t.Fatalf("exit code %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	msg := strings.TrimSpace(r.stderr)
	if strings.Count(msg, "\n") != 0 {
		t.Errorf("error is not one line:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "hunter2") || strings.Contains(r.stdout, "hunter2") {
		t.Errorf("password printed: %s", msg)
	}
	if r.elapsed > 6*time.Second {
		t.Errorf("took %v to reject bad input", r.elapsed)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("bad input created %s: work started before the input was checked", out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().String()[strings.LastIndexByte(l.Addr().String(), ':')+1:]
	l.Close()
	return port
}

type resultFile struct {
	Status  string `json:"status"`
	Targets []struct {
		Name      string `json:"name"`
		ServerPID int    `json:"server_pid"`
	} `json:"targets"`
	Cells []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Phases []struct {
			Name string `json:"name"`
			Ops  int64  `json:"ops"`
		} `json:"phases"`
	} `json:"cells"`
}

func readResult(t *testing.T, outDir string) (resultFile, string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(outDir, "*", "result.json"))
	if len(matches) != 1 {
		return resultFile{}, ""
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var r resultFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result.json is not valid JSON: %v", err)
	}
	return r, matches[0]
}

// TestInterruptCleansUp sends SIGINT (Ctrl-C), SIGTERM (kill) or SIGHUP (the
// terminal went away) to a run with managed servers in the middle of a long
// cell, then proves that no server process and no temp dir is left, and that
// result.json keeps the cells finished before the signal.
func TestInterruptCleansUp(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { interruptCleansUp(t, sig) })
	}
}

func interruptCleansUp(t *testing.T, sig syscall.Signal) {
	out := t.TempDir()
	data := servertest.BaseDir(t) // searchable by the unprivileged user postgres runs as
	p := testkit.Start(t, exec.Command(testkit.Binary(t), "run", "kv", "--stores", "postgres,redis", "--keys", "500,5000000", "--out", out, "--data-dir", data, "--quiet"))

	// Wait until the first cell (postgres, 500 keys) is in the file and the
	// second (5M keys, minutes long) is under way.
	var pids []int
	if !testkit.WaitFor(90*time.Second, 100*time.Millisecond, func() bool {
		r, _ := readResult(t, out)
		if len(r.Cells) == 0 {
			return false
		}
		for _, tg := range r.Targets {
			pids = append(pids, tg.ServerPID)
		}
		return true
	}) {
		t.Fatalf("no cell finished in 90 s\nstderr: %s", p.Stderr)
	}
	time.Sleep(500 * time.Millisecond)
	p.Signal(t, sig)
	if code := p.WaitExit(t, 45*time.Second); code != 1 {
		t.Errorf("exit code %d after %v, want 1\nstderr: %s", code, sig, p.Stderr)
	}

	r, path := readResult(t, out)
	if r.Status != "interrupted" {
		t.Errorf("result status %q, want interrupted", r.Status)
	}
	if len(r.Cells) != 1 || r.Cells[0].Status != "ok" || !strings.Contains(r.Cells[0].ID, "keys=500") {
		t.Errorf("result %s should keep exactly the finished cell postgres keys=500: %+v", path, r.Cells)
	}
	for _, p := range r.Cells[0].Phases {
		if p.Ops != 500 {
			t.Errorf("finished cell phase %s has %d ops, want 500", p.Name, p.Ops)
		}
	}
	if len(pids) == 0 || pids[0] == 0 {
		t.Fatalf("result has no server pid for the managed postgres: %+v", r.Targets)
	}
	for _, pid := range pids {
		if testkit.Alive(pid) {
			t.Errorf("server pid %d still running after %v", pid, sig)
		}
	}
	if procs := servertest.ProcessesUnder(data); len(procs) > 0 {
		t.Errorf("processes still using %s: %v", data, procs)
	}
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		t.Errorf("left behind in the data dir: %s", e.Name())
	}
}
