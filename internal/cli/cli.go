// Package cli holds storebench's commands; each is a thin layer over the
// packages that do the work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1 // a run failed or was interrupted
	ExitUsage  = 2 // bad usage or bad input, found before any work started
)

// App is what the commands share.
type App struct {
	Registry  target.Registry
	Workloads workload.Registry
	Stdout    io.Writer
	Stderr    io.Writer
	Version   string
	Commit    string
}

// UsageError is bad input: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// FailedError means the run happened but something in it failed: exit code 1.
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

// Main runs the command line and returns the process exit code.
func (a *App) Main(ctx context.Context, args []string) int {
	root := a.root()
	root.SetArgs(args)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(a.Stderr, "storebench: "+err.Error())
	var fe *FailedError
	if errors.As(err, &fe) {
		return ExitFailed
	}
	// Everything else found before work started: usage errors, flag errors.
	return ExitUsage
}

func (a *App) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "storebench",
		Short: "Measure which data store a cache, session or payments workload needs",
		Long: `storebench runs the same workload against every data store — in-process memory,
files, SQLite, PostgreSQL, Redis, Memcached — and reports what each choice costs
in latency, throughput and durability, with versions and settings recorded.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(a.runCmd(), a.listCmd(), a.reportCmd(), a.compareCmd(), a.mergeCmd(), a.cleanCmd(), a.versionCmd())
	return root
}

// cobraArgs wraps cobra's argument validators so their errors count as usage errors.
func cobraArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}
