package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
)

func readOnlyResult(t *testing.T, out string) *result.Result {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("%d results in %s", len(matches), out)
	}
	r, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunMixFlags(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "mix", "--stores", "memory,redis", "--ops", "3000", "--clients", "4",
		"--read-ratio", "0.75", "--key-dist", "zipfian", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	if !strings.Contains(buf.String(), "by operation") {
		t.Errorf("the summary has no per-kind table:\n%s", buf.String())
	}
	r := readOnlyResult(t, out)
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells, want memory and redis", len(r.Cells))
	}
	for _, c := range r.Cells {
		if !strings.HasSuffix(c.ID, "/mix/key_dist=zipfian/read_ratio=0.75") || c.Params["read_ratio"] != 0.75 || c.Params["key_dist"] != "zipfian" {
			t.Errorf("cell %s params %v", c.ID, c.Params)
		}
		p, ok := c.Phase("mix")
		if !ok || c.Status != result.CellOK || len(p.Errors) != 0 || p.ByOp["get"].Ops+p.ByOp["set"].Ops != p.Ops || p.Ops != 3000 {
			t.Errorf("cell %s: status %s, phase %+v", c.ID, c.Status, p)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "throughput", "--stores", "memory", "--read-ratio", "0.5"}, "throughput: field read_ratio does not apply"},
		{[]string{"run", "mix", "--stores", "memory", "--key-dist", "latest"}, `unknown key distribution "latest" (valid: uniform, zipfian, sequential)`},
		{[]string{"run", "mix", "--stores", "memory", "--read-ratio", "2"}, "read ratio must be between 0 (all sets) and 1 (all gets), got 2"},
	} {
		buf.Reset()
		if code := netApp(&buf).Main(context.Background(), append(c.args, "--out", out)); code != ExitUsage || !strings.Contains(buf.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want a usage error saying %q", c.args, code, buf.String(), c.want)
		}
	}
}

// Two mixes of one scenario get distinct cell ids from their ratio and
// distribution.
func TestRunMixScenario(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mix.yaml")
	src := `name: mixes
targets: [memory]
workloads:
  - type: mix
    keyspace: 1000
    load: {clients: 2, ops: 1000}
  - type: mix
    name: mix-writes
    keyspace: 1000
    read_ratio: 0.05
    key_dist: sequential
    load: {clients: 2, ops: 1000}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	out := filepath.Join(dir, "out")
	if code := netApp(&buf).Main(context.Background(), []string{"run", file, "--out", out, "--quiet"}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	r := readOnlyResult(t, out)
	want := []string{"memory/mix/key_dist=uniform/read_ratio=0.9", "memory/mix-writes/key_dist=sequential/read_ratio=0.05"}
	if len(r.Cells) != 2 || r.Cells[0].ID != want[0] || r.Cells[1].ID != want[1] {
		t.Fatalf("cells %+v, want ids %v", r.Cells, want)
	}
	if p, _ := r.Cells[1].Phase("mix"); p.ByOp["set"].Ops < 900 || p.ByOp["get"].Ops+p.ByOp["set"].Ops != 1000 {
		t.Errorf("5%% gets: by op %+v", p.ByOp)
	}
}
