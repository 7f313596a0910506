package durability

import (
	"context"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestWriterOutsideTerminalGroup: a terminal's Ctrl-C signals the whole
// foreground process group. A writer process in storebench's group died of
// it first, and the interrupted cell was recorded as failed ("the writer
// process is gone"); in a group of its own it lives until storebench, having
// seen the signal, kills it.
func TestWriterOutsideTerminalGroup(t *testing.T) {
	ctx := context.Background()
	st, err := files.New(ctx, files.Config{Dir: t.TempDir(), Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, st)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := childSpecFor(kindOf(t, "files"), info)
	if err != nil {
		t.Fatal(err)
	}
	spec.Writers = 1
	child, err := startChild(ctx, nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer child.kill()
	pgid, err := unix.Getpgid(child.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == unix.Getpgrp() {
		t.Fatalf("writer process %d is in storebench's process group %d: a terminal's Ctrl-C kills it before storebench can stop the cell", child.cmd.Process.Pid, pgid)
	}
}
