package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// TestRunYCSBFlags: --ycsb makes a cell per core workload, --records the
// load phase's inserts, and a property file's pairs with -p's over them
// reach every cell (recorded), -p beating the file.
func TestRunYCSBFlags(t *testing.T) {
	out, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "my.properties")
	if err := os.WriteFile(file, []byte("recordcount=100\noperationcount=900\nreadproportion=0.2\nupdateproportion=0.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "ycsb", "--stores", "memory", "--ycsb", "a,c", "--records", "300",
		"--property-file", file, "-p", "readproportion=0.4", "--out", out, "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	r := readOnlyResult(t, out)
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells, want a and c", len(r.Cells))
	}
	for i, name := range []string{"a", "c"} {
		c := r.Cells[i]
		props, _ := c.Params["properties"].(map[string]any)
		if !strings.HasSuffix(c.ID, "/ycsb/ycsb="+name) || c.Params["records"] != float64(300) || props["readproportion"] != "0.4" || props["updateproportion"] != "0.8" {
			t.Errorf("cell %s params %v", c.ID, c.Params)
		}
		loaded, _ := c.Phase("load")
		ran, ok := c.Phase("run")
		// Both workloads read 0.4 and update 0.8 (weights): the file
		// and -p are laid over each one's own file.
		if !ok || c.Status != result.CellOK || loaded.Ops != 300 || ran.Ops != 900 || len(ran.ByOp) != 2 || ran.ByOp["read"].Ops+ran.ByOp["update"].Ops != 900 {
			t.Errorf("cell %s: status %s, load %d ops, run %+v", c.ID, c.Status, loaded.Ops, ran)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "ycsb", "--stores", "memory", "-p", "novalue"}, `-p "novalue": want key=value`},
		{[]string{"run", "ycsb", "--stores", "memory", "-p", "nosuch=1"}, `unknown property "nosuch"`},
		{[]string{"run", "ycsb", "--stores", "memory", "--property-file", filepath.Join(dir, "none")}, "--property-file: open"},
		{[]string{"run", "ycsb", "--stores", "memory", "--records", "1k,2k"}, `--records "1k,2k": want one count`},
		{[]string{"run", "ycsb", "--stores", "memory", "--ycsb", "a,x"}, `unknown core workload "x"`},
		{[]string{"run", "mix", "--stores", "memory", "--ycsb", "a"}, "mix: field ycsb does not apply"},
	} {
		buf.Reset()
		if code := netApp(&buf).Main(context.Background(), append(c.args, "--out", out)); code != ExitUsage || !strings.Contains(buf.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want a usage error saying %q", c.args, code, buf.String(), c.want)
		}
	}
}

// TestCountFlagsTakeSuffixes: --ops and --warmup-ops read a count as --keys
// and --records do (50k), as the ycsb acceptance line writes it.
func TestCountFlagsTakeSuffixes(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "ycsb", "--stores", "memory", "--ycsb", "c", "--records", "300",
		"--ops", "2k", "--warmup-ops", "1k", "--out", out, "--quiet"})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	ran, ok := readOnlyResult(t, out).Cells[0].Phase("run")
	if !ok || ran.Ops != 2000 {
		t.Errorf("run phase %+v, want 2000 ops", ran)
	}
	for _, bad := range [][]string{{"--ops", "5x"}, {"--ops", "1k,2k"}, {"--warmup-ops", ""}} {
		buf.Reset()
		args := append([]string{"run", "ycsb", "--stores", "memory", "--out", out}, bad...)
		if code := netApp(&buf).Main(context.Background(), args); code != ExitUsage || !strings.Contains(buf.String(), bad[0]) {
			t.Errorf("%v: exit %d, %s; want a usage error naming %s", bad, code, buf.String(), bad[0])
		}
	}
}
