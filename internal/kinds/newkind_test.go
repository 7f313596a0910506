package kinds_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/cli"
	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/internal/workload/durability"
)

// vaultCrashLoss are the new kind's own crash-loss facts.
const vaultProcessCrash, vaultPowerLoss = "vault: nothing it acknowledged (the test's claim)", "vault: the writes of the last second"

// withVault is the binary's registry and one kind more, made in this file
// alone: the files store under another name, with facts of its own.
func withVault() target.Registry {
	reg := kinds.All()
	k, ok := reg.Lookup("files")
	if !ok {
		panic("no files kind")
	}
	k.Name, k.Schemes, k.CheckURL = "vault", nil, nil
	k.Description = "a test's own kind: one file per key, under another name"
	k.CrashLoss = func(map[string]string) (string, string) { return vaultProcessCrash, vaultPowerLoss }
	return append(reg, k)
}

// The durability workload's writer is this test binary run again: it must
// know the new kind too.
func TestMain(m *testing.M) {
	if durability.IsChild() {
		os.Exit(durability.ChildMain(withVault()))
	}
	os.Exit(m.Run())
}

// TestANewKindFromATestFileAlone (issue 29): a kind registered here, with
// no change to any other file, runs kv, runs durability (with its own
// crash-loss facts in the result) and renders in every report format.
func TestANewKindFromATestFileAlone(t *testing.T) {
	run := func(args ...string) *result.Result {
		t.Helper()
		out := t.TempDir()
		var buf bytes.Buffer
		app := &cli.App{Registry: withVault(), Workloads: all.Types(), Stdout: &buf, Stderr: &buf, Version: "test"}
		if code := app.Main(context.Background(), append(args, "--out", out, "--data-dir", t.TempDir(), "--quiet")); code != cli.ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, buf.String())
		}
		files, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
		if len(files) != 1 {
			t.Fatalf("%v: results %v", args, files)
		}
		r, err := result.Read(files[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "md", "html", "csv"} {
			buf.Reset()
			app := &cli.App{Registry: withVault(), Workloads: all.Types(), Stdout: &buf, Stderr: &buf, Version: "test"}
			if code := app.Main(context.Background(), []string{"report", files[0], "--format", format}); code != cli.ExitOK || !strings.Contains(buf.String(), "vault") {
				t.Errorf("%v: report --format %s: exit %d, the kind named %v", args, format, code, strings.Contains(buf.String(), "vault"))
			}
		}
		return r
	}
	kv := run("run", "kv", "--stores", "vault", "--keys", "100")
	if len(kv.Cells) != 1 || kv.Cells[0].Target != "vault" || kv.Cells[0].Status != result.CellOK || len(kv.Cells[0].Phases) != 2 {
		t.Fatalf("kv cells %+v", kv.Cells)
	}
	file := filepath.Join(t.TempDir(), "durability.yaml")
	scenario := "name: vault-durability\ntargets: [vault]\nworkloads:\n  - {type: durability, durability: {trials: 1, min_acked: 20}}\nload: {clients: 2}\n"
	if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	d := run("run", file)
	if len(d.Cells) != 1 || d.Cells[0].Durability == nil {
		t.Fatalf("durability cells %+v", d.Cells)
	}
	if s := d.Cells[0].Durability; s.ProcessCrash != vaultProcessCrash || s.PowerLoss != vaultPowerLoss || s.Trials != 1 {
		t.Errorf("durability summary: crash %q, power %q, %d trials; want the kind's own facts", s.ProcessCrash, s.PowerLoss, s.Trials)
	}
}
