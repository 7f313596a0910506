package payments

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	schema "github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Selections: how the payer and the requester's accounts are drawn.
const (
	// SelectUniform draws every account with the same probability.
	SelectUniform = "uniform"
	// SelectSkewed is the original tool's -kinda-random: 80% of draws go to
	// the first 20% of accounts, and 80% of those to the first 4%.
	SelectSkewed = "skewed"
)

// Lock orders: which account of a transfer is updated first.
const (
	// LockAscending updates the lower account id first, as the
	// specification says: two transfers never wait for each other in a cycle.
	LockAscending = "ascending"
	// LockPayerFirst debits the payer first, as a naive implementation
	// would: opposite transfers between two accounts can deadlock, and the
	// engine must detect it (and the workload retry).
	LockPayerFirst = "payer-first"
)

// Isolation levels; "" is the engine's default.
var isolations = []string{"", "read-committed", "repeatable-read", "serializable"}

// eachFault calls fn with every fault's name and fraction.
func eachFault(f schema.Faults, fn func(name string, v float64)) {
	fn("frozen_account", f.FrozenAccount)
	fn("frozen_card", f.FrozenCard)
	fn("expired_card", f.ExpiredCard)
	fn("wrong_cvv", f.WrongCVV)
	fn("expired_token", f.ExpiredToken)
	fn("missing_permission", f.MissingPermission)
}

// Params are one payments cell's parameters. DefaultParams has the
// specification's defaults; Validate accepts only complete parameters.
type Params struct {
	// Data set.
	Orgs           int   // organizations; accounts are spread over them by the seed
	UsersPerOrg    int   // users per organization
	Accounts       int64 // accounts, one card each
	InitialBalance int64 // every account's balance at the start
	AmountMin      int64 // transfer amounts are uniform in [AmountMin, AmountMax]
	AmountMax      int64
	Selection      string // SelectUniform or SelectSkewed
	Seed           uint64 // the data and every draw derive from it

	// Load.
	Workers         int           // connections, one per worker (closed loop)
	Duration        time.Duration // measured time; or
	Transfers       int64         // measured transfer attempts
	Warmup          time.Duration // timed warm-up, with Duration
	WarmupTransfers int64         // counted warm-up, with Transfers
	// SteadyWindow is the last part of the run whose mean committed/s is
	// the headline figure (the article averages the last 60 minutes); it is
	// cut to the measured duration when longer.
	SteadyWindow time.Duration

	// Transactions.
	Mode       string // store.PaymentsRoutine or store.PaymentsClient
	Durability string // store.PaymentsStrict or store.PaymentsRelaxed
	Isolation  string // "" (engine default), read-committed, repeatable-read, serializable
	MaxTries   int    // tries of a transaction that hits a deadlock or serialization failure
	LockOrder  string // LockAscending or LockPayerFirst

	// DeleteFraction deletes one random earlier transfer per 1/DeleteFraction
	// commits (0.05: every 20th); 0 disables deletes.
	DeleteFraction float64
	Faults         schema.Faults

	// StatsInterval is how often server statistics are sampled; 0 = never.
	StatsInterval time.Duration
	// Keep leaves the tables in place after the run (for inspection).
	Keep bool
	// Note says why the cell runs another mode than the one asked for.
	Note string
}

// DefaultParams returns the specification's defaults (the article's run).
func DefaultParams() Params {
	return Params{
		Orgs: 50, UsersPerOrg: 1, Accounts: 1_000_000, InitialBalance: 50_000_000,
		AmountMin: 1, AmountMax: 999, Selection: SelectUniform, Seed: 42,
		Workers: 64, Duration: 120 * time.Minute, Warmup: 3 * time.Minute, SteadyWindow: 60 * time.Minute,
		Mode: store.PaymentsRoutine, Durability: store.PaymentsStrict, MaxTries: 3, LockOrder: LockAscending,
		DeleteFraction: 0.05, StatsInterval: 5 * time.Second,
	}
}

// Validate reports every problem with p at once.
func (p Params) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("payments: "+format, a...)) }
	if p.Orgs < 1 {
		bad("orgs must be at least 1, got %d", p.Orgs)
	}
	if p.UsersPerOrg < 1 {
		bad("users_per_org must be at least 1, got %d", p.UsersPerOrg)
	}
	switch {
	case p.Orgs < 1 || p.UsersPerOrg < 1:
	case p.Orgs > maxUsers || p.UsersPerOrg > maxUsers || p.Orgs*p.UsersPerOrg > maxUsers:
		bad("orgs %d × users_per_org %d: at most %d users, whose tokens are built in client memory before loading", p.Orgs, p.UsersPerOrg, maxUsers)
	case p.Orgs*p.UsersPerOrg < 2:
		bad("need at least 2 users (orgs × users_per_org) so that requester and payer differ")
	}
	if p.Accounts < 2 {
		bad("accounts must be at least 2, got %d", p.Accounts)
	} else if err := workload.CheckKeys("accounts", p.Accounts); err != nil {
		bad("%v", err)
	}
	if p.AmountMin < 0 || p.AmountMax < p.AmountMin {
		bad("amounts [%d, %d]: want 0 <= amount_min <= amount_max", p.AmountMin, p.AmountMax)
	}
	if p.InitialBalance < 0 {
		bad("initial_balance must not be negative, got %d", p.InitialBalance)
	} else if p.Accounts > 0 && p.InitialBalance > math.MaxInt64/p.Accounts {
		bad("accounts × initial_balance overflows 64 bits")
	}
	if p.Selection != SelectUniform && p.Selection != SelectSkewed {
		bad("selection %q: want %s or %s", p.Selection, SelectUniform, SelectSkewed)
	}
	if p.Mode != store.PaymentsRoutine && p.Mode != store.PaymentsClient {
		bad("mode %q: want %s or %s", p.Mode, store.PaymentsRoutine, store.PaymentsClient)
	}
	if p.Durability != store.PaymentsStrict && p.Durability != store.PaymentsRelaxed {
		bad("durability %q: want %s or %s", p.Durability, store.PaymentsStrict, store.PaymentsRelaxed)
	}
	okIso := false
	for _, i := range isolations {
		okIso = okIso || p.Isolation == i
	}
	if !okIso {
		bad("isolation %q: want read-committed, repeatable-read or serializable, or nothing for the engine's default", p.Isolation)
	}
	if p.LockOrder != LockAscending && p.LockOrder != LockPayerFirst {
		bad("lock_order %q: want %s or %s", p.LockOrder, LockAscending, LockPayerFirst)
	}
	if p.MaxTries < 1 || p.MaxTries > maxTries {
		bad("max_tries %d: want 1 to %d (pgbench retries a failed transaction a few times)", p.MaxTries, maxTries)
	}
	if p.DeleteFraction < 0 || p.DeleteFraction > 1 || math.IsNaN(p.DeleteFraction) {
		bad("delete_fraction must be in [0, 1], got %v", p.DeleteFraction)
	}
	sum := 0.0
	eachFault(p.Faults, func(name string, v float64) {
		if v < 0 || v > 1 || math.IsNaN(v) {
			bad("fault %s must be a fraction in [0, 1], got %v", name, v)
		}
		sum += v
	})
	if sum >= 1 {
		bad("the fault fractions add up to %v: no transfer could commit", sum)
	}
	if p.StatsInterval != 0 && p.StatsInterval < minStatsInterval {
		bad("stats_interval %v: want 0 (never) or at least %v: each sample queries the server", p.StatsInterval, minStatsInterval)
	}
	bounds := []error{
		workload.CheckClients("clients", p.Workers),
		workload.CheckDuration("duration", p.Duration), workload.CheckDuration("warmup", p.Warmup),
		workload.CheckDuration("steady_window", p.SteadyWindow), workload.CheckDuration("stats_interval", p.StatsInterval),
		workload.CheckOps("warmup_ops", p.WarmupTransfers, 0),
	}
	if p.Transfers != 0 {
		bounds = append(bounds, workload.CheckOps("ops", p.Transfers, 1))
	}
	for _, err := range bounds {
		if err != nil {
			bad("%v", err)
		}
	}
	if len(errs) == 0 {
		if err := p.loadConfig().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("payments: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Bounds of the payments parameters besides the shared ones (workload).
const (
	// maxUsers bounds orgs × users_per_org: every user's tokens are built
	// in client memory before loading (userBytes each).
	maxUsers = 1_000_000
	// maxTries bounds the tries of one transfer.
	maxTries = 1000
	// minStatsInterval keeps the sampler from querying the server flat out.
	minStatsInterval = 100 * time.Millisecond
	// userBytes is a user and its tokens in the data set (data).
	userBytes = 512
)

// Memory estimates a cell's memory (workload.Estimate): per client its
// connection and recorder, and the users and tokens of the data set.
func (p Params) Memory() workload.Estimate {
	return workload.Estimate{Clients: p.Workers, PerClient: workload.ClientBytes(0, 0), Shared: int64(p.Orgs) * int64(p.UsersPerOrg) * userBytes}
}

func (p Params) config() store.PaymentsConfig {
	return store.PaymentsConfig{Mode: p.Mode, Durability: p.Durability, Isolation: p.Isolation}
}

// Modes lists the transaction modes a kind's store offers, asked of its
// prototype (store.PaymentsModer): both unless it says otherwise.
func Modes(proto store.Store) []string {
	if m, ok := proto.(store.PaymentsModer); ok {
		return m.PaymentsModes()
	}
	return []string{store.PaymentsRoutine, store.PaymentsClient}
}

// Section is the payments section of a scenario's workload entry
// (`payments:` in YAML). Zero fields take DefaultParams' values; Modes and
// Durabilities expand into one cell each.
type Section struct {
	Accounts       int64    `yaml:"accounts,omitempty" json:"accounts,omitempty"`
	Orgs           int      `yaml:"orgs,omitempty" json:"orgs,omitempty"`
	UsersPerOrg    int      `yaml:"users_per_org,omitempty" json:"users_per_org,omitempty"`
	InitialBalance int64    `yaml:"initial_balance,omitempty" json:"initial_balance,omitempty"`
	AmountMin      *int64   `yaml:"amount_min,omitempty" json:"amount_min,omitempty"`
	AmountMax      int64    `yaml:"amount_max,omitempty" json:"amount_max,omitempty"`
	Selection      string   `yaml:"selection,omitempty" json:"selection,omitempty"`
	Modes          []string `yaml:"modes,omitempty" json:"modes,omitempty"`
	Durabilities   []string `yaml:"durability,omitempty" json:"durability,omitempty"`
	Isolation      string   `yaml:"isolation,omitempty" json:"isolation,omitempty"`
	MaxTries       int      `yaml:"max_tries,omitempty" json:"max_tries,omitempty"`
	LockOrder      string   `yaml:"lock_order,omitempty" json:"lock_order,omitempty"`
	// DeleteFraction is a pointer so that 0 (no deletes) differs from unset.
	DeleteFraction *float64       `yaml:"delete_fraction,omitempty" json:"delete_fraction,omitempty"`
	Faults         *schema.Faults `yaml:"faults,omitempty" json:"faults,omitempty"`
	SteadyWindow   time.Duration  `yaml:"steady_window,omitempty" json:"steady_window,omitempty"`
	StatsInterval  time.Duration  `yaml:"stats_interval,omitempty" json:"stats_interval,omitempty"`
	Keep           bool           `yaml:"keep,omitempty" json:"keep,omitempty"`
}

// Variant is one (mode, durability) cell of a Section. Note is set when the
// store runs another mode than the ones asked for (SQLite: client).
type Variant struct{ Mode, Durability, Note string }

// Variants expands Modes × Durabilities (defaults: routine, strict), in
// that order. Modes a store does not offer are left out; a store that
// offers none of those asked for runs its own modes instead (SQLite, which
// has no server-side routines, runs client mode), with a Note saying so.
func (s Section) Variants(k target.Kind) []Variant {
	modes := workload.SliceOr(s.Modes, []string{store.PaymentsRoutine})
	durs := workload.SliceOr(s.Durabilities, []string{store.PaymentsStrict})
	offered := Modes(k.Prototype)
	var run []string
	for _, m := range modes {
		if slices.Contains(offered, m) {
			run = append(run, m)
		}
	}
	note := ""
	if len(run) == 0 {
		run = offered
		note = fmt.Sprintf("%s offers no %s mode: %s mode instead", k.Name, strings.Join(modes, " or "), strings.Join(offered, ", "))
	}
	var out []Variant
	for _, m := range run {
		for _, d := range durs {
			out = append(out, Variant{m, d, note})
		}
	}
	return out
}

// PlanParams builds one cell's Params from a scenario's payments section,
// one of its variants, the scenario's seed and the effective load (clients →
// Workers, duration → Duration, ops → Transfers, warmup → Warmup,
// warmup_ops → WarmupTransfers). Pipelines, connect-per-op and open-loop
// rates do not apply and are rejected.
func PlanParams(s Section, v Variant, seed uint64, l workload.Load) (Params, error) {
	p := DefaultParams()
	if l.Pipeline > 1 || l.ConnectPerOp || l.Rate != 0 {
		return p, errors.New("payments: pipeline, connect_per_op and rate do not apply (a transfer is four dependent round trips on one connection, in a closed loop)")
	}
	p.Accounts = cmp.Or(s.Accounts, p.Accounts)
	p.Orgs = cmp.Or(s.Orgs, p.Orgs)
	p.UsersPerOrg = cmp.Or(s.UsersPerOrg, p.UsersPerOrg)
	p.InitialBalance = cmp.Or(s.InitialBalance, p.InitialBalance)
	p.AmountMin = workload.ValueOr(s.AmountMin, p.AmountMin)
	p.AmountMax = cmp.Or(s.AmountMax, p.AmountMax)
	p.Selection = cmp.Or(s.Selection, p.Selection)
	p.Isolation = s.Isolation
	p.MaxTries = cmp.Or(s.MaxTries, p.MaxTries)
	p.LockOrder = cmp.Or(s.LockOrder, p.LockOrder)
	p.DeleteFraction = workload.ValueOr(s.DeleteFraction, p.DeleteFraction)
	p.Faults = workload.ValueOr(s.Faults, p.Faults)
	p.SteadyWindow = cmp.Or(s.SteadyWindow, p.SteadyWindow)
	p.StatsInterval = cmp.Or(s.StatsInterval, p.StatsInterval)
	p.Keep = s.Keep
	p.Mode, p.Durability, p.Note = v.Mode, v.Durability, v.Note
	p.Seed = cmp.Or(seed, p.Seed)
	p.Workers = cmp.Or(l.Clients, p.Workers)
	if l.Ops != 0 || l.Duration != 0 {
		p.Transfers, p.Duration, p.Warmup = l.Ops, l.Duration, 0
	}
	p.Warmup = cmp.Or(l.Warmup, p.Warmup)
	p.WarmupTransfers = l.WarmupOps
	return p, p.Validate()
}

// CellParams is the record of p for a result cell's params.
func (p Params) CellParams() map[string]any {
	m := map[string]any{
		"accounts": p.Accounts, "orgs": p.Orgs, "users_per_org": p.UsersPerOrg,
		"initial_balance": p.InitialBalance, "amount_min": p.AmountMin, "amount_max": p.AmountMax,
		"selection": p.Selection, "seed": p.Seed, "clients": p.Workers,
		"mode": p.Mode, "durability": p.Durability, "isolation": p.isolationName(),
		"max_tries": p.MaxTries, "lock_order": p.LockOrder, "delete_fraction": p.DeleteFraction,
		"steady_window": p.SteadyWindow.String(),
	}
	if p.Transfers > 0 {
		m["transfers"], m["warmup_transfers"] = p.Transfers, p.WarmupTransfers
	} else {
		m["duration"], m["warmup"] = p.Duration.String(), p.Warmup.String()
	}
	eachFault(p.Faults, func(name string, v float64) {
		if v > 0 {
			m["fault_"+name] = v
		}
	})
	if p.Note != "" {
		m["note"] = p.Note
	}
	return m
}

// MarshalJSON records p as a result cell's params (CellParams).
func (p Params) MarshalJSON() ([]byte, error) { return json.Marshal(p.CellParams()) }

func (p Params) isolationName() string {
	if p.Isolation == "" {
		return "default"
	}
	return p.Isolation
}
