package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/run"
	"github.com/storebench/storebench/internal/store"
)

type cleanFlags struct {
	dataDir   string
	stores    string
	dryRun    bool
	olderThan time.Duration
}

func (a *App) cleanCmd() *cobra.Command {
	var f cleanFlags
	cmd := &cobra.Command{
		Use:   "clean [--data-dir DIR] [--stores URL,...] [--dry-run]",
		Short: "Remove what storebench runs that no longer run left behind (killed, or run with --keep)",
		Long: `Clean finds what storebench runs made and did not remove, because they were
killed or kept their data (run --keep), and removes it:

  - in --data-dir (and /tmp for socket dirs): the runs' scratch dirs and the
    data dirs of their managed servers;
  - in each store named by URL with --stores: the runs' namespaces, i.e. the
    PostgreSQL schemas, MariaDB/MySQL databases, Redis keys (a SCAN of the
    whole keyspace), directories of a file:// store and tables of a
    sqlite:// file.

It touches only what carries storebench's mark (a marker file, the schema's
comment, the owner table, the key prefix), and never what a run that is still
running made: each thing names its run's host, pid and process start time.
Nor anything outside it: a schema or database that objects outside depend on
(your view on a kept table, a foreign key from another schema or database) is
left, with those objects named and the SQL to remove it deliberately; the
exit status stays 0, as for anything else clean leaves alone.
What was made on another host, or by an older storebench that did not record
its process, cannot be checked from here: it is left unless --older-than says
how old is surely over. Memcached cannot list its keys: what runs leave there
goes as memcached evicts it.`,
		Example: `  storebench clean --dry-run
  storebench clean --data-dir /mnt/scratch
  storebench clean --stores postgres://me:secret@db:5432/app,redis://cache:6379 --dry-run`,
		Args: cobraArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.clean(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataDir, "data-dir", os.TempDir(), "where the runs made their data dirs (run --data-dir)")
	fl.StringVar(&f.stores, "stores", "", "comma-separated URLs of stores the runs used, e.g. postgres://me:secret@db/app")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be removed, remove nothing")
	fl.DurationVar(&f.olderThan, "older-than", 0, "also remove what cannot be checked from here (made on another host or by an older storebench) when made longer ago than this, e.g. 24h")
	return cmd
}

func (a *App) clean(cmd *cobra.Command, f cleanFlags) error {
	ctx := cmd.Context()
	if f.olderThan < 0 {
		return usagef("--older-than must not be negative, got %v", f.olderThan)
	}
	found, unmarked, err := run.FindLeftovers(ctx, a.Registry, f.dataDir, f.stores)
	if err != nil {
		return asUsage(err)
	}
	out := cmd.OutOrStdout()
	verb := "removed"
	if f.dryRun {
		verb = "would remove"
	}
	var removed, left, withDependents int
	var errs []error
	for _, l := range found {
		if !l.Stale(f.olderThan) {
			left++
			fmt.Fprintf(out, "%-13s %s (%s)\n", "left alone", l.What, run.DescribeLeftover(l, f.olderThan))
			continue
		}
		// A namespace that objects outside it depend on (a user's view on a
		// kept table) is left, and the dry run says so too. The drop checks
		// again: one made since the check leaves it all the same.
		err := l.Dependents(ctx)
		if err == nil && !f.dryRun {
			err = l.Remove(ctx)
		}
		if de, ok := errors.AsType[*store.DependentsError](err); ok {
			left++
			withDependents++
			fmt.Fprintf(out, "%-13s %s (%s; %s; %s)\n", "left alone", l.What, de.Reason(), de.Hint, run.DescribeLeftover(l, f.olderThan))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			fmt.Fprintf(out, "%-13s %s: %v\n", "not removed", l.What, err)
			continue
		}
		removed++
		fmt.Fprintf(out, "%-13s %s (%s)\n", verb, l.What, run.DescribeLeftover(l, f.olderThan))
	}
	for _, p := range unmarked {
		fmt.Fprintf(out, "%-13s %s (no %s marker: not made by a run of this storebench; remove it by hand if it is yours)\n", "left alone", p, owner.MarkerFile)
	}
	left += len(unmarked)
	summary := fmt.Sprintf("%s: %d, left alone: %d", verb, removed, left)
	if withDependents > 0 {
		summary += fmt.Sprintf(" (%d because objects outside depend on them)", withDependents)
	}
	fmt.Fprintln(out, summary)
	if len(errs) > 0 {
		return &FailedError{Err: fmt.Errorf("%d of %d could not be removed: %w", len(errs), removed+len(errs), errors.Join(errs...))}
	}
	return nil
}
