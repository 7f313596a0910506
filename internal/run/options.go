package run

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/scenario"
)

// Options are how a run is run, as opposed to what it measures (the
// scenario). They mirror the run command's flags, and their errors name
// each by its flag, so that a message reads the same from a test as from
// the command line.
type Options struct {
	Suite string // the built-in suite run, "" for a scenario file or a workload (recorded)
	Quick bool   // the scenario is the suite's quick mode (recorded)

	Out     string // the directory that receives <time>/result.json
	DataDir string // the parent of the data dirs of managed servers, files and sqlite

	// ServerCPUs and ClientCPUs pin managed servers and this process: a CPU
	// list such as "0-1", "" for the scenario's list, Unpinned for none.
	ServerCPUs, ClientCPUs string
	// ClientThreads is GOMAXPROCS in every cell, 1 to
	// scenario.MaxClientThreads; nil takes the scenario's, else each cell
	// chooses its own (chooseClientThreads).
	ClientThreads *int
	// Repeat runs every cell this many times, 1 to scenario.MaxRepeat; nil
	// takes the scenario's repeat, else once.
	Repeat *int

	// ServerBins are --server-bin's values, store=path: a user's own build
	// of a managed server, checked by NewPlan.
	ServerBins []string

	Keep         bool   // leave URL targets' data in place after the run
	NoHiccup     bool   // no hiccup meter beside the phases (--no-hiccup)
	FailFast     bool   // stop at the first failed cell
	NetMechanism string // how a network is made: auto, netem or proxy ("" is auto)

	// Shard runs the I-th of N equal parts of the scenario (--shard I/N,
	// workload.ParseShard); "" runs it whole.
	Shard string
	// StartAt, when set, is the RFC 3339 wall-clock instant the run waits
	// for after starting its first target, before its first cell
	// (--start-at): shards started apart begin measuring together, without
	// a coordinator.
	StartAt string

	// Asserts are --assert's thresholds (the scenario's asserts are added
	// to them); each is judged on every cell it scopes after it ran.
	Asserts []string
	// AssertAbort, when set, stops the run at the first failed assertion
	// judged once this long has passed since the run began (--assert-abort
	// [=GRACE]); what was measured is kept.
	AssertAbort *time.Duration

	Command         []string // the command line, recorded with its passwords redacted
	Version, Commit string   // storebench's build, recorded
}

// Unpinned is the CPU list that leaves a side unpinned, overriding the
// scenario's list.
const Unpinned = "none"

// InputError is bad input found before any work: the command line's exit 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputf(format string, a ...any) error {
	return &InputError{Err: fmt.Errorf(format, a...)}
}

// asInput marks errors found while reading input as input errors.
func asInput(err error) error {
	if _, ok := errors.AsType[*InputError](err); ok {
		return err
	}
	return &InputError{Err: err}
}

// check validates the options that need no scenario and returns the
// repeat the run uses: each option has its check here and nowhere else.
func (o Options) check(s *scenario.Scenario) (repeat int, err error) {
	if strings.TrimSpace(o.Out) == "" {
		return 0, inputf("--out %q names no directory: give the one that receives <time>/result.json (default: results)", o.Out)
	}
	if err := checkDataDir(o.DataDir); err != nil {
		return 0, err
	}
	if !slices.Contains([]string{"auto", "netem", "proxy"}, o.mechanism()) {
		return 0, inputf("--net-mechanism %q: want auto, netem or proxy", o.NetMechanism)
	}
	repeat = max(s.Repeat, 1)
	if o.Repeat != nil {
		if *o.Repeat < 1 || *o.Repeat > scenario.MaxRepeat {
			return 0, inputf("--repeat %d: want 1 to %d", *o.Repeat, scenario.MaxRepeat)
		}
		repeat = *o.Repeat
	}
	if o.ClientThreads != nil && (*o.ClientThreads < 1 || *o.ClientThreads > scenario.MaxClientThreads) {
		return 0, inputf("--client-threads %d: want 1 to %d", *o.ClientThreads, scenario.MaxClientThreads)
	}
	return repeat, nil
}

func (o Options) mechanism() string {
	if o.NetMechanism == "" {
		return "auto"
	}
	return o.NetMechanism
}

// checkDataDir checks --data-dir, of run and of clean alike.
func checkDataDir(dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return inputf("--data-dir %s: not a directory", dir)
	}
	return nil
}
