package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
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
	if st, err := os.Stat(f.dataDir); err != nil || !st.IsDir() {
		return usagef("--data-dir %s: not a directory", f.dataDir)
	}
	if f.olderThan < 0 {
		return usagef("--older-than must not be negative, got %v", f.olderThan)
	}
	specs, err := a.cleanTargets(f.stores)
	if err != nil {
		return err
	}
	// Everything is listed before anything is removed: a store that cannot
	// be reached is bad input, found before any work.
	found, unmarked, err := target.LocalLeftovers(f.dataDir, "/tmp")
	if err != nil {
		return usagef("--data-dir %s: %v", f.dataDir, err)
	}
	for _, spec := range specs {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		l, err := a.Registry.Leftovers(lctx, spec)
		cancel()
		if err != nil {
			// One line: drivers list every address they tried on a line each.
			return usagef("%s", strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "))
		}
		found = append(found, l...)
	}

	out := cmd.OutOrStdout()
	verb := "removed"
	if f.dryRun {
		verb = "would remove"
	}
	var removed, left int
	var errs []error
	for _, l := range found {
		if !l.Stale(f.olderThan) {
			left++
			fmt.Fprintf(out, "%-13s %s (%s)\n", "left alone", l.What, describeLeftover(l, f.olderThan))
			continue
		}
		if !f.dryRun {
			if err := l.Remove(ctx); err != nil {
				errs = append(errs, err)
				fmt.Fprintf(out, "%-13s %s: %v\n", "not removed", l.What, err)
				continue
			}
		}
		removed++
		fmt.Fprintf(out, "%-13s %s (%s)\n", verb, l.What, describeLeftover(l, f.olderThan))
	}
	for _, p := range unmarked {
		fmt.Fprintf(out, "%-13s %s (no %s marker: not made by a run of this storebench; remove it by hand if it is yours)\n", "left alone", p, owner.MarkerFile)
	}
	left += len(unmarked)
	fmt.Fprintf(out, "%s: %d, left alone: %d\n", verb, removed, left)
	if len(errs) > 0 {
		return &FailedError{Err: fmt.Errorf("%d of %d could not be removed: %w", len(errs), removed+len(errs), errors.Join(errs...))}
	}
	return nil
}

// cleanTargets parses --stores: URLs of stores that can list what runs left.
func (a *App) cleanTargets(stores string) ([]target.Spec, error) {
	if stores == "" {
		return nil, nil
	}
	var specs []target.Spec
	for _, raw := range strings.Split(stores, ",") {
		spec, err := a.Registry.Parse(raw)
		if err != nil {
			return nil, usagef("--stores: %v", err)
		}
		k, _ := a.Registry.Lookup(spec.Store)
		switch {
		case spec.Managed():
			return nil, usagef("--stores %s: give the URL of a store the runs used; a managed server's data dir is under --data-dir, which clean looks through anyway", spec.Label())
		case k.Namespaces == nil:
			return nil, usagef("--stores %s: %s cannot list its keys, so nothing can find what runs left there; it goes as %s evicts it", store.RedactURL(spec.URL), k.Name, k.Name)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// describeLeftover says whose it is, when it was made, how big it is and,
// when it is left, why.
func describeLeftover(l target.Leftover, olderThan time.Duration) string {
	var parts []string
	if l.Owner == owner.Alive {
		parts = append(parts, "its run is running: "+l.Why)
	} else {
		parts = append(parts, l.Why)
	}
	if !l.Made.IsZero() {
		parts = append(parts, "made "+l.Made.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if l.Bytes > 0 {
		parts = append(parts, humanBytes(l.Bytes))
	}
	if l.Owner == owner.Unknown && !l.Stale(olderThan) {
		parts = append(parts, "cannot be checked from here: see --older-than")
	}
	return strings.Join(parts, ", ")
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// reportLeftovers logs, in one line, what runs that no longer run left in
// the data dir and in this run's own targets where listing is one query
// (not Redis, whose listing scans every key), with the command that removes
// it. Best effort: a store that does not answer quickly is passed over.
func (a *App) reportLeftovers(ctx context.Context, dataDir string, specs []target.Spec, logf func(string, ...any)) {
	dirs, _, _ := target.LocalLeftovers(dataDir, "/tmp")
	var count int
	var bytes int64
	for _, l := range dirs {
		if l.Stale(0) {
			count++
			bytes += l.Bytes
		}
	}
	var what []string
	if count > 0 {
		what = append(what, fmt.Sprintf("%d dirs (%s)", count, humanBytes(bytes)))
	}
	var urls []string
	seen := map[string]bool{}
	for _, spec := range specs {
		k, _ := a.Registry.Lookup(spec.Store)
		if spec.Managed() || !k.CheapList || seen[spec.URL] {
			continue
		}
		seen[spec.URL] = true
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		found, err := a.Registry.Leftovers(lctx, spec)
		cancel()
		n := 0
		for _, l := range found {
			if err == nil && l.Stale(0) {
				n++
			}
		}
		if n > 0 {
			what = append(what, fmt.Sprintf("%d namespaces at %s", n, store.RedactURL(spec.URL)))
			urls = append(urls, store.RedactURL(spec.URL))
		}
	}
	if len(what) == 0 {
		return
	}
	hint := "storebench clean --dry-run --data-dir " + dataDir
	if len(urls) > 0 {
		hint += " --stores " + strings.Join(urls, ",")
	}
	logf("left by storebench runs that no longer run (killed, or run with --keep): %s; to list and remove them: %s", strings.Join(what, ", "), hint)
}
