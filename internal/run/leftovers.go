package run

import (
	"context"
	"fmt"
	"github.com/storebench/storebench/internal/powercut"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
)

// FindLeftovers lists what storebench runs made and did not remove: in
// dataDir (and /tmp for socket dirs), and in each store named by URL in
// stores (comma-separated, "" for none). unmarked are directories that look
// like a run's but carry no owner marker. Everything is listed before
// anything is removed: a store that cannot be reached is an *InputError,
// as are a bad dataDir and a bad URL, so clean stops before any work.
func FindLeftovers(ctx context.Context, reg target.Registry, dataDir, stores string) (found []target.Leftover, unmarked []string, err error) {
	if err := checkDataDir(dataDir); err != nil {
		return nil, nil, err
	}
	specs, err := cleanTargets(reg, stores)
	if err != nil {
		return nil, nil, err
	}
	// A power-cut mount whose run was SIGKILLed answers nothing and would
	// stop the listing: it is unmounted first, even by a dry run (it holds
	// no data of its own: that is in its backing directory, listed below).
	if _, err := powercut.CleanStale(dataDir); err != nil {
		return nil, nil, inputf("--data-dir %s: %v", dataDir, err)
	}
	found, unmarked, err = target.LocalLeftovers(dataDir, "/tmp")
	if err != nil {
		return nil, nil, inputf("--data-dir %s: %v", dataDir, err)
	}
	for _, spec := range specs {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		l, err := reg.Leftovers(lctx, spec)
		cancel()
		if err != nil {
			// One line: drivers list every address they tried on a line each.
			return nil, nil, inputf("%s", strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "))
		}
		found = append(found, l...)
	}
	return found, unmarked, nil
}

// cleanTargets parses --stores: URLs of stores that can list what runs left.
func cleanTargets(reg target.Registry, stores string) ([]target.Spec, error) {
	if stores == "" {
		return nil, nil
	}
	var specs []target.Spec
	list, err := reg.SplitStores(stores)
	if err != nil {
		return nil, inputf("%v", err)
	}
	for _, raw := range list {
		spec, err := reg.Parse(raw)
		if err != nil {
			return nil, inputf("--stores: %v", err)
		}
		k, _ := reg.Lookup(spec.Store)
		switch {
		case spec.Managed():
			return nil, inputf("--stores %s: give the URL of a store the runs used; a managed server's data dir is under --data-dir, which clean looks through anyway", spec.Label())
		case k.Namespaces == nil:
			return nil, inputf("--stores %s: %s cannot list its keys, so nothing can find what runs left there; it goes as %s evicts it", store.RedactURL(spec.URL), k.Name, k.Name)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// DescribeLeftover says whose it is, when it was made, how big it is and,
// when it is left, why.
func DescribeLeftover(l target.Leftover, olderThan time.Duration) string {
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
func reportLeftovers(ctx context.Context, reg target.Registry, dataDir string, specs []target.Spec, logf func(string, ...any)) {
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
		k, _ := reg.Lookup(spec.Store)
		if spec.Managed() || !k.CheapList || seen[spec.URL] {
			continue
		}
		seen[spec.URL] = true
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		found, err := reg.Leftovers(lctx, spec)
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
