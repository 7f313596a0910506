package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

func TestWriterKeepsAValidFileAfterEveryCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r := &Result{Schema: Schema, ID: filepath.Base(dir), Status: StatusRunning, StartedAt: time.Now().UTC(), Environment: ReadEnvironment("")}
	w, err := Create(filepath.Dir(dir), r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := w.AddCell(Cell{ID: "c", Status: CellOK, Phases: []metrics.Phase{{Name: "write", Ops: int64(i + 1)}}}); err != nil {
			t.Fatal(err)
		}
		got, err := Read(w.Path())
		if err != nil {
			t.Fatalf("after cell %d: %v", i, err)
		}
		if len(got.Cells) != i+1 || got.Status != StatusRunning {
			t.Fatalf("after cell %d: %d cells, status %s", i, len(got.Cells), got.Status)
		}
	}
	if err := w.Finish(StatusComplete); err != nil {
		t.Fatal(err)
	}
	got, _ := Read(w.Path())
	if got.Status != StatusComplete || got.FinishedAt == nil {
		t.Errorf("status %s finished %v", got.Status, got.FinishedAt)
	}
	if p, ok := got.Cells[2].Phase("write"); !ok || p.Ops != 3 {
		t.Errorf("phase lookup: %+v %v", p, ok)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

func TestCreateFailsOnUnwritableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Create(filepath.Join(f, "sub"), &Result{Schema: Schema}); err == nil {
		t.Fatal("Create under a regular file succeeded")
	}
}

func TestReadRejectsOtherSchemas(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	b, _ := json.Marshal(map[string]string{"schema": "other/v9"})
	os.WriteFile(p, b, 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "other/v9") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvironment(t *testing.T) {
	e := ReadEnvironment("")
	if e.Cores <= 0 || e.OS == "" || e.Arch == "" || e.ClientCPUs == "" {
		t.Errorf("environment incomplete: %+v", e)
	}
	if e.CPUModel == "" || e.MemoryBytes == 0 || e.Kernel == "" {
		t.Errorf("CPU model, memory or kernel missing (read from /proc and uname): %+v", e)
	}
}

func TestFormatCPUList(t *testing.T) {
	for want, in := range map[string][]int{"0-2,5": {0, 1, 2, 5}, "1": {1}, "0,2,4-5": {0, 2, 4, 5}, "": nil} {
		if got := FormatCPUList(in); got != want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", in, got, want)
		}
	}
}
