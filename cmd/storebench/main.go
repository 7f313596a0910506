// Command storebench measures which data store a cache, session or payments
// workload needs: the same workload against every store, fairly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/storebench/storebench/internal/cli"
	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/workload/all"
	"github.com/storebench/storebench/internal/workload/durability"
)

// Set by the Makefile with -ldflags.
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	// storebench re-runs itself as the writer of a files or SQLite durability
	// trial, so that the writer, not storebench, is what gets killed.
	if durability.IsChild() {
		os.Exit(durability.ChildMain(kinds.All()))
	}
	// A reader that goes away (storebench run | head) must not kill the run
	// before it has stopped its servers and removed its directories, which
	// Go's default for SIGPIPE on stdout would: with the signal caught, the
	// write fails with EPIPE instead, and the run ends as it would have.
	// (Caught, not ignored: an ignored signal would stay ignored in the
	// servers it starts.)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	go func() {
		for range pipe {
		}
	}()
	// Ctrl-C, SIGTERM and SIGHUP (the terminal went away) cancel the run; the
	// run stops its servers, removes its directories and keeps its results.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	app := &cli.App{Registry: kinds.All(), Workloads: all.Types(), Stdout: os.Stdout, Stderr: os.Stderr, Version: version, Commit: commit}
	code := app.Main(ctx, os.Args[1:])
	stop()
	// A backstop: every server this process started is gone before it exits.
	cleanup, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_ = server.StopAll(cleanup)
	cancel()
	os.Exit(code)
}
