package durability

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/workload"
)

// Defaults applied by Params.withDefaults to the fields left zero.
const (
	DefaultTrials          = 3
	DefaultWriters         = 4
	DefaultValueSize       = 100
	DefaultMinAcked        = 2000
	DefaultKillWindow      = 2 * time.Second
	DefaultTrialTimeout    = 2 * time.Minute
	DefaultRecoveryTimeout = 2 * time.Minute
)

// Limits that keep a mistyped parameter from running for hours.
const (
	maxTrials    = 1000
	maxWriters   = 1024
	maxValueSize = 1 << 20
)

// Params are one durability cell's parameters.
type Params struct {
	// Trials is how many crashes: each trial writes, is killed and counts
	// what survived (see the package doc for why trials share one server).
	Trials int
	// Writers are concurrent clients, each writing its own sequence of keys
	// one at a time (a write is acknowledged when the store's call returns).
	Writers int
	// ValueSize is the bytes per value; values derive from Seed.
	ValueSize int
	// MinAcked is how many acknowledged writes (all writers together) a trial
	// waits for before the kill may come.
	MinAcked int64
	// KillWindow: the kill comes at a seeded random moment, uniform within
	// this window after MinAcked writes were acknowledged; 0 means
	// DefaultKillWindow.
	KillWindow time.Duration
	// Seed makes the keys, the values and the kill moments reproducible.
	Seed uint64
	// TrialTimeout bounds how long a trial may take to reach MinAcked; 0
	// means DefaultTrialTimeout.
	TrialTimeout time.Duration
	// RecoveryTimeout bounds restart → first successful read; 0 means
	// DefaultRecoveryTimeout.
	RecoveryTimeout time.Duration
	// Fault is FaultKill (default) or FaultPower: a power cut under a
	// managed server (package powercut).
	Fault string
	// ChildCommand starts the writer process of an in-process store (files,
	// sqlite): the program and its arguments, run with the environment
	// variable ChildEnv set. nil means this executable with ChildArg, which
	// needs the ChildMain hook (see IsChild).
	ChildCommand []string
}

// Validate rejects impossible parameters before any work starts. Zero
// fields take their defaults (see the Default constants) and are valid.
func (p Params) Validate() error {
	var errs []error
	d := p.WithDefaults()
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("durability: "+format, a...)) }
	if p.Trials < 0 || p.Trials > maxTrials {
		bad("trials must be 1-%d, got %d", maxTrials, p.Trials)
	}
	if p.Writers < 0 || p.Writers > maxWriters {
		bad("writers must be 1-%d, got %d", maxWriters, p.Writers)
	}
	if p.ValueSize < 0 || p.ValueSize > maxValueSize {
		bad("value size must be 1-%d bytes, got %d", maxValueSize, p.ValueSize)
	}
	for _, err := range []error{
		workload.CheckOps("min_acked", p.MinAcked, 0), workload.CheckDuration("kill_window", p.KillWindow),
		workload.CheckDuration("trial_timeout", p.TrialTimeout), workload.CheckDuration("recovery_timeout", p.RecoveryTimeout),
	} {
		if err != nil {
			bad("%v", err)
		}
	}
	if p.KillWindow >= 0 && p.TrialTimeout >= 0 && d.KillWindow >= d.TrialTimeout {
		bad("kill window (%v) must be shorter than the trial timeout (%v)", d.KillWindow, d.TrialTimeout)
	}
	if p.Fault != "" && p.Fault != FaultKill && p.Fault != FaultPower {
		bad("fault %q: want %s (SIGKILL of the server) or %s (a power cut)", p.Fault, FaultKill, FaultPower)
	}
	if len(p.ChildCommand) > 0 && p.ChildCommand[0] == "" {
		bad("child command has an empty program name")
	}
	return errors.Join(errs...)
}

// Memory estimates a cell's memory (workload.Estimate): per writer its
// connection and the value it writes and reads back.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	return workload.Estimate{Clients: p.Writers, PerClient: workload.ConnBytes + 2*(workload.KeyBytes+int64(p.ValueSize))}
}

// WithDefaults returns p with every zero field set to its default.
func (p Params) WithDefaults() Params {
	p.Trials = cmp.Or(p.Trials, DefaultTrials)
	p.Writers = cmp.Or(p.Writers, DefaultWriters)
	p.ValueSize = cmp.Or(p.ValueSize, DefaultValueSize)
	p.MinAcked = cmp.Or(p.MinAcked, DefaultMinAcked)
	p.KillWindow = cmp.Or(p.KillWindow, DefaultKillWindow)
	p.TrialTimeout = cmp.Or(p.TrialTimeout, DefaultTrialTimeout)
	p.RecoveryTimeout = cmp.Or(p.RecoveryTimeout, DefaultRecoveryTimeout)
	return p
}
