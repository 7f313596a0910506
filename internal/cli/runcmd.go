package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/progress"
	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/run"
)

// planRun reads the run's argument and flags into a scenario and options
// and plans the run, starting nothing and writing nothing: bad input is a
// UsageError here.
func (a *App) planRun(cmd *cobra.Command, name string, f runFlags) (*run.Plan, error) {
	s, suite, err := a.loadScenario(name, f)
	if err != nil {
		return nil, asUsage(err)
	}
	a.addSecrets(s.Values...)
	if f.quick {
		if err := s.ApplyQuick(a.Workloads); err != nil {
			return nil, usagef("--quick: %v", err)
		}
	}
	if err := a.applyFlags(cmd, s, f); err != nil {
		return nil, err
	}
	p, err := run.NewPlan(cmd.Context(), a.Registry, a.Workloads, s, a.runOptions(cmd, suite, f))
	if err != nil {
		return nil, asUsage(err)
	}
	return p, nil
}

// runOptions are the flags that say how to run, as the runner takes them;
// the runner checks them.
func (a *App) runOptions(cmd *cobra.Command, suite string, f runFlags) run.Options {
	o := run.Options{
		Suite: suite, Quick: f.quick, Out: f.out, DataDir: f.dataDir,
		ServerCPUs: f.serverCPUs, ClientCPUs: f.clientCPUs,
		Keep: f.keep, NoHiccup: f.noHiccup, FailFast: f.failFast, NetMechanism: f.netMechanism, ServerBins: f.serverBins, Shard: f.shard, StartAt: f.start,
		Command: a.command(), Version: a.Version, Commit: a.Commit,
	}
	if cmd.Flags().Changed("repeat") {
		o.Repeat = &f.repeat
	}
	if cmd.Flags().Changed("client-threads") {
		o.ClientThreads = &f.clientThreads
	}
	return o
}

func (a *App) run(cmd *cobra.Command, name string, f runFlags) error {
	p, err := a.planRun(cmd, name, f)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	prog := progress.New(out, cmd.ErrOrStderr(), f.quiet) // log lines, and a live line on a terminal
	o, err := p.Execute(cmd.Context(), prog)
	prog.Close()
	if _, input := errors.AsType[*run.InputError](err); input {
		return &UsageError{Err: err}
	} else if err != nil {
		return &FailedError{Err: err}
	}
	report.Text(out, o.Result)
	report.Kept(out, o.Result)
	fmt.Fprintf(out, "\nresult: %s\n", o.Path)
	if o.ReportErr != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "storebench: %v\n", o.ReportErr) // the result is safe; only its page is missing
	} else {
		fmt.Fprintf(out, "report: %s\n", o.Report)
	}
	switch {
	case o.Interrupted:
		return &FailedError{Err: fmt.Errorf("interrupted; %d finished cells kept in %s", len(o.Result.Cells), o.Path)}
	case o.Failed > 0:
		return &FailedError{Err: fmt.Errorf("%d of %d cells failed; see %s", o.Failed, o.Cells, o.Path)}
	}
	return nil
}

// asUsage marks errors found while reading input as usage errors.
func asUsage(err error) error {
	if _, ok := errors.AsType[*UsageError](err); ok {
		return err
	}
	return &UsageError{Err: err}
}
