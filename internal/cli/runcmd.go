package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/livemetrics"
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
	opts := a.runOptions(cmd, suite, f)
	if cmd.Flags().Changed("assert-abort") {
		grace, err := time.ParseDuration(f.assertAbort)
		if err != nil || grace < 0 || grace > maxAssertGrace {
			return nil, usagef("--assert-abort=%s: want a grace period from 0s to %v, e.g. 30s", f.assertAbort, maxAssertGrace)
		}
		opts.AssertAbort = &grace
	}
	if err := checkOutputFile("--junit", f.junit); err != nil {
		return nil, err
	}
	p, err := run.NewPlan(cmd.Context(), a.Registry, a.Workloads, s, opts)
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
		Keep: f.keep, NoHiccup: f.noHiccup, FailFast: f.failFast, Asserts: f.asserts, NetMechanism: f.netMechanism, ServerBins: f.serverBins, Shard: f.shard, StartAt: f.start,
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
	var addr string
	if f.metricsAddr != "" {
		var err error
		if addr, err = livemetrics.ParseAddr(f.metricsAddr); err != nil {
			return usagef("--metrics-addr %v", err)
		}
	}
	p, err := a.planRun(cmd, name, f)
	if err != nil {
		return err
	}
	var live *livemetrics.Server
	if addr != "" {
		// Bound before any work, so a port in use is bad input like a bad address.
		if live, err = livemetrics.Listen(addr, a.redact); err != nil {
			return usagef("--metrics-addr: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "metrics: serving %s while the run lasts\n", live.URL())
	}
	out := cmd.OutOrStdout()
	prog := progress.New(out, cmd.ErrOrStderr(), f.quiet) // log lines, and a live line on a terminal
	var obs run.Observer = prog
	if live != nil {
		obs = live.Observe(prog)
	}
	o, err := p.Execute(cmd.Context(), obs)
	prog.Close()
	if live != nil {
		if cerr := live.Close(); cerr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "storebench: metrics server: %v\n", cerr) // the run's result stands
		}
	}
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
	if f.junit != "" {
		if err := writeJUnit(f.junit, func(w io.Writer) error { return report.JUnit(w, o.Result) }); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "storebench: %v\n", err)
		} else {
			fmt.Fprintf(out, "junit: %s\n", f.junit)
		}
	}
	return runExit(o)
}

// maxAssertGrace bounds --assert-abort's grace: a run longer than a day
// is not one a pipeline waits for.
const maxAssertGrace = 24 * time.Hour

// runExit is a finished run's exit: 1 when it could not measure (a cell
// failed, it was interrupted), 3 when it measured and a threshold failed,
// else 0. A measured "no" (no capacity at an SLO) is an answer, not a
// failure, unless an assertion says it is.
func runExit(o *run.Outcome) error {
	switch {
	case o.Interrupted:
		return &FailedError{Err: fmt.Errorf("interrupted; %d finished cells kept in %s", len(o.Result.Cells), o.Path)}
	case o.Failed > 0:
		return &FailedError{Err: fmt.Errorf("%d of %d cells failed; see %s", o.Failed, o.Cells, o.Path)}
	}
	if n := o.Result.AssertionsFailed(); n > 0 || o.Aborted {
		var first string
		for _, v := range o.Result.Assertions {
			if !v.Pass {
				first = assert.Line(v)
				break
			}
		}
		return &AssertError{Err: fmt.Errorf("%d of %d assertion verdicts failed, the first: %s; see %s", n, len(o.Result.Assertions), first, o.Path)}
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
