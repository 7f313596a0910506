//go:build unix

package scenario

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO nobody writes is refused at once: opening it for reading waited
// for a writer, in open(2), where even SIGTERM did not end storebench.
func TestReadFileRefusesAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- readFile(t, fifo) }()
	select {
	case err := <-done:
		wantRefused(t, err, "scenario "+fifo+": a named pipe (FIFO), not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile waits on a FIFO nobody writes")
	}
}
