// Package payments is the payments workload's part of the result schema
// (result.Cell.Payments): the data types the workload fills and every
// report reads. They belong to the schema, not to the workload, so that
// renaming a field of the workload cannot change storebench.result/v1.
package payments

import (
	"fmt"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// Summary is what a payments cell adds to the result beside its phases
// (result.Cell.Payments). Counts cover the measured part unless they say
// otherwise; the invariants cover everything the run did, warm-up included.
type Summary struct {
	Mode       string `json:"mode"`
	Durability string `json:"durability"`
	Isolation  string `json:"isolation"`
	LockOrder  string `json:"lock_order"`
	MaxTries   int    `json:"max_tries"`
	// Settings are the engine's effective settings behind durability and
	// isolation, what a crash loses, and how the driver sends statements.
	Settings store.PaymentsSettings `json:"settings"`
	Data     DataSummary            `json:"data"`
	Workers  int                    `json:"workers"`

	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"`
	// Attempts are transfer attempts: committed + declined + errors.
	Attempts      int64            `json:"attempts"`
	Committed     int64            `json:"committed"`
	CommittedPerS float64          `json:"committed_per_s"`
	Declined      int64            `json:"declined"`
	DeclinedBy    map[string]int64 `json:"declined_by,omitempty"`
	// Retries counts transactions (and deletes) tried again after a
	// deadlock, serialization failure or lock timeout; they are not errors.
	Retries int64 `json:"retries"`
	// RetrySamples are a few of the retried errors, distinct.
	RetrySamples []string `json:"retry_samples,omitempty"`
	// Errors are attempts that failed otherwise (or ran out of tries).
	Errors int64 `json:"errors"`
	// Redraws are draws of requester and payer that picked one user twice.
	Redraws      int64 `json:"redraws"`
	Deletes      int64 `json:"deletes"`
	DeleteMisses int64 `json:"delete_misses,omitempty"`
	// Warmup is what the warm-up did; its commits and deletes are in the data.
	Warmup WarmupCounts `json:"warmup"`

	// Steady is the headline figure: the mean committed/s over the last
	// part of the run, and how much it varied.
	Steady SteadyState `json:"steady"`
	// PerSecond is committed transfers per second of the measured part.
	PerSecond []int32  `json:"per_second"`
	Per10s    []Bucket `json:"per_10s"`
	PerMinute []Bucket `json:"per_minute"`

	ServerStats []StatsSample `json:"server_stats,omitempty"`
	Invariants  Invariants    `json:"invariants"`
	Notes       []string      `json:"notes,omitempty"`
}

// DataSummary describes the data set.
type DataSummary struct {
	Orgs           int     `json:"orgs"`
	Users          int64   `json:"users"`
	Accounts       int64   `json:"accounts"`
	InitialBalance int64   `json:"initial_balance"`
	AmountMin      int64   `json:"amount_min"`
	AmountMax      int64   `json:"amount_max"`
	Selection      string  `json:"selection"`
	Seed           uint64  `json:"seed"`
	DeleteFraction float64 `json:"delete_fraction"`
	Faults         Faults  `json:"faults"`
	SetupS         float64 `json:"setup_s"`
	DDL            string  `json:"ddl,omitempty"`
}

// WarmupCounts is what happened during the warm-up.
type WarmupCounts struct {
	Committed int64 `json:"committed"`
	Declined  int64 `json:"declined"`
	Retries   int64 `json:"retries"`
	Errors    int64 `json:"errors"`
	Deletes   int64 `json:"deletes"`
}

// SteadyState is the mean over the last WindowS seconds of the measured
// part and the coefficient of variation of the buckets in it (stddev /
// mean; a drop like the article's MariaDB at minute 40 raises it).
type SteadyState struct {
	WindowS  float64 `json:"window_s"`
	MeanPerS float64 `json:"mean_per_s"`
	CV       float64 `json:"cv"`
	// BucketS is the length of the buckets the CV is computed over: 60
	// when the window holds 3 minutes or more, else 10, else 1.
	BucketS int `json:"bucket_s"`
	Buckets int `json:"buckets"`
}

// Bucket is one 10-second or one-minute slice of the measured part.
type Bucket struct {
	StartS        int64            `json:"start_s"`
	Seconds       float64          `json:"seconds"` // the last bucket may be partial
	Committed     int64            `json:"committed"`
	CommittedPerS float64          `json:"committed_per_s"`
	Declined      int64            `json:"declined,omitempty"`
	DeclinedBy    map[string]int64 `json:"declined_by,omitempty"`
	Retries       int64            `json:"retries,omitempty"`
	Errors        int64            `json:"errors,omitempty"`
	Deletes       int64            `json:"deletes,omitempty"`
}

// StatsSample is one sample of server statistics; TS is seconds since the
// measured start (negative during set-up and warm-up).
type StatsSample struct {
	TS     float64            `json:"t_s"`
	Values map[string]float64 `json:"values"`
}

// Invariants are the checks after the run.
type Invariants struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Check is one invariant; Rows names the rows that break it (the first few).
type Check struct {
	Name   string   `json:"name"`
	OK     bool     `json:"ok"`
	Detail string   `json:"detail"`
	Rows   []string `json:"rows,omitempty"`
}

// String is the one-line verdict, with the failing checks and their rows.
func (iv Invariants) String() string {
	if iv.OK {
		return "invariants: ok"
	}
	var b strings.Builder
	b.WriteString("invariants violated:")
	for _, c := range iv.Checks {
		if c.OK {
			continue
		}
		fmt.Fprintf(&b, " %s: %s", c.Name, c.Detail)
		if len(c.Rows) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(c.Rows, "; "))
		}
		b.WriteString(";")
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Faults are the fractions of attempts that present a fault, each of which
// must end in a decline under its own reason and leave no trace in the data.
// Frozen accounts, frozen cards and expired cards are properties of the data
// (that fraction of the rows, chosen by the seed); a wrong CVV, an expired
// token and a missing permission are presented by the client on that
// fraction of attempts (half on the requester's side, half on the approver's
// for the token faults).
type Faults struct {
	FrozenAccount     float64 `yaml:"frozen_account,omitempty" json:"frozen_account,omitempty"`
	FrozenCard        float64 `yaml:"frozen_card,omitempty" json:"frozen_card,omitempty"`
	ExpiredCard       float64 `yaml:"expired_card,omitempty" json:"expired_card,omitempty"`
	WrongCVV          float64 `yaml:"wrong_cvv,omitempty" json:"wrong_cvv,omitempty"`
	ExpiredToken      float64 `yaml:"expired_token,omitempty" json:"expired_token,omitempty"`
	MissingPermission float64 `yaml:"missing_permission,omitempty" json:"missing_permission,omitempty"`
}

// Headline is the one-line account of a cell for a terminal: committed
// transfers per second, the steady state, declines, retries, errors,
// deletes, the durability beside the figure, and the invariants' verdict.
func (s *Summary) Headline() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s mode: %.0f committed transfers/s", s.Mode, s.CommittedPerS)
	if s.Steady.WindowS > 0 {
		fmt.Fprintf(&b, " (last %s: %.0f/s, cv %.2f)", time.Duration(s.Steady.WindowS*float64(time.Second)), s.Steady.MeanPerS, s.Steady.CV)
	}
	fmt.Fprintf(&b, ", %d declined, %d retried, %d errors, %d deletes; durability %s: %s; %s",
		s.Declined, s.Retries, s.Errors, s.Deletes, s.Durability, s.Settings.Durability, s.Invariants)
	return b.String()
}
