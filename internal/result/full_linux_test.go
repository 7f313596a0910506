package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFullDisk: on a full filesystem the result cannot be written; the error
// says the disk is full and no temporary file is left (the first version
// left a 0-byte result.json.tmp). It mounts a 64 KiB tmpfs, so it needs root,
// as make test and CI run.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test mounts a small tmpfs to fill: run make test as root or with sudo")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatalf("mount a 64 KiB tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	w, err := Create(dir, &Result{Schema: Schema, ID: "run"})
	if err != nil {
		t.Fatal(err)
	}
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	filler.Close()
	err = w.AddCell(Cell{ID: "c", Status: CellOK, Error: strings.Repeat("x", 64<<10)})
	if err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("write on a full disk: %v, want it to say the disk is full", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(w.Path()))
	for _, e := range ents {
		if e.Name() != "result.json" {
			t.Errorf("left in the result directory: %s", e.Name())
		}
	}
	if _, err := Read(w.Path()); err != nil {
		t.Errorf("the previous version of the result is gone: %v", err)
	}
}
