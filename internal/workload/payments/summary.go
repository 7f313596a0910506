package payments

import (
	"fmt"
	"math"
	"sort"
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

func reasonMap(c *counts) map[string]int64 {
	var m map[string]int64
	for i, n := range c.reasons {
		if n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[Reasons[i]] = n
		}
	}
	return m
}

// series fills the per-second, per-10 s and per-minute figures and the
// steady state from the workers' counts over a measured duration d.
func (s *Summary) series(ws []*worker, d time.Duration, window time.Duration) {
	nSec := int(math.Ceil(d.Seconds()))
	var tens []counts
	for _, w := range ws {
		for i, n := range w.perSecond {
			for len(s.PerSecond) <= i {
				s.PerSecond = append(s.PerSecond, 0)
			}
			s.PerSecond[i] += n
		}
		for i := range w.buckets {
			for len(tens) <= i {
				tens = append(tens, counts{})
			}
			tens[i].add(&w.buckets[i])
		}
	}
	nSec = max(nSec, len(s.PerSecond))
	for len(s.PerSecond) < nSec {
		s.PerSecond = append(s.PerSecond, 0)
	}
	bucket := func(start int64, width int64, cs []counts) Bucket {
		var c counts
		for i := range cs {
			c.add(&cs[i])
		}
		secs := math.Min(float64(width), d.Seconds()-float64(start))
		secs = math.Max(secs, 0)
		b := Bucket{StartS: start, Seconds: secs, Committed: c.committed, Declined: c.declined,
			DeclinedBy: reasonMap(&c), Retries: c.retries, Errors: c.errors, Deletes: c.deletes}
		if secs > 0 {
			b.CommittedPerS = float64(c.committed) / secs
		}
		return b
	}
	for i := range tens {
		s.Per10s = append(s.Per10s, bucket(int64(i)*10, 10, tens[i:i+1]))
	}
	for i := 0; i < len(tens); i += 6 {
		s.PerMinute = append(s.PerMinute, bucket(int64(i)*10, 60, tens[i:min(i+6, len(tens))]))
	}

	// The steady state counts whole seconds only: the last, partial one is
	// left out, as is anything before the window.
	full := int(d / time.Second)
	win := full
	if window > 0 {
		win = min(win, int(window/time.Second))
	}
	if win <= 0 {
		return
	}
	sec := s.PerSecond[full-win : full]
	var sum int64
	for _, n := range sec {
		sum += int64(n)
	}
	s.Steady = SteadyState{WindowS: float64(win), MeanPerS: float64(sum) / float64(win)}
	width := 1
	switch {
	case win >= 180:
		width = 60
	case win >= 30:
		width = 10
	}
	// Buckets aligned to the end of the run, so each is whole.
	var rates []float64
	for end := len(sec); end-width >= 0; end -= width {
		var n int64
		for _, v := range sec[end-width : end] {
			n += int64(v)
		}
		rates = append(rates, float64(n)/float64(width))
	}
	s.Steady.BucketS, s.Steady.Buckets = width, len(rates)
	s.Steady.CV = cv(rates)
}

// cv is the coefficient of variation (population stddev / mean).
func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean
}

// maxRows is how many offending rows a check lists.
const maxRows = 10

// evaluate compares what the store read back with what the run did.
func evaluate(p Params, f store.PaymentsFacts, committed, deleted int64, clientMinutes map[int64]int64, journal []store.PaymentsDeleted) Invariants {
	var iv Invariants
	add := func(name string, ok bool, detail string, rows []string) {
		iv.Checks = append(iv.Checks, Check{Name: name, OK: ok, Detail: detail, Rows: rows})
	}
	want := p.Accounts * p.InitialBalance
	add("money conserved", f.Accounts == p.Accounts && f.SumBalance == want,
		fmt.Sprintf("sum of %d balances = %d, want %d accounts × %d = %d (off by %d)",
			f.Accounts, f.SumBalance, p.Accounts, p.InitialBalance, want, f.SumBalance-want), nil)

	var rows []string
	for _, id := range f.Negative {
		rows = append(rows, fmt.Sprintf("account %d", id))
	}
	add("no negative balance", f.NegativeCount == 0, fmt.Sprintf("%d accounts below zero", f.NegativeCount), rows)

	rows = nil
	for _, m := range f.Mismatched {
		rows = append(rows, fmt.Sprintf("account %d: balance %d, want %d (initial + in − out, deleted transfers included)", m.Account, m.Balance, m.Expected))
	}
	add("balances add up", f.MismatchedCount == 0,
		fmt.Sprintf("%d accounts whose balance ≠ initial + Σ in − Σ out over the surviving transfers and the %d journaled deletes", f.MismatchedCount, len(journal)), rows)

	add("row count", f.Rows == committed-deleted,
		fmt.Sprintf("%d transfers in the table, want %d committed − %d deleted = %d", f.Rows, committed, deleted, committed-deleted), nil)

	// Per minute: the table's counts plus the journal's must be the
	// client's, minute by minute.
	sqlMin := map[int64]int64{}
	for _, m := range f.PerMinute {
		sqlMin[m.Minute] += m.Count
	}
	for _, j := range journal {
		sqlMin[floorDiv(j.CreatedUs, 60_000_000)]++
	}
	keys := map[int64]bool{}
	for k := range sqlMin {
		keys[k] = true
	}
	for k := range clientMinutes {
		keys[k] = true
	}
	var ks []int64
	for k := range keys {
		if sqlMin[k] != clientMinutes[k] {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	rows = nil
	for _, k := range ks[:min(len(ks), maxRows)] {
		rows = append(rows, fmt.Sprintf("minute %s: table + journal %d, client %d", time.Unix(k*60, 0).UTC().Format("2006-01-02 15:04"), sqlMin[k], clientMinutes[k]))
	}
	add("per-minute counts", len(ks) == 0, fmt.Sprintf("%d of %d minutes differ between the table plus the delete journal and the client's commits", len(ks), len(keys)), rows)

	rows = nil
	for _, m := range f.Malformed {
		rows = append(rows, fmt.Sprintf("transfer %d: %s", m.ID, m.Problem))
	}
	add("rows well-formed", f.MalformedCount == 0,
		fmt.Sprintf("%d transfers break a row rule (from ≠ to, amount in range, card of the from account, requester of the to account's organization, created in the run, card not frozen or expired, from account not frozen)", f.MalformedCount), rows)

	iv.OK = true
	for _, c := range iv.Checks {
		iv.OK = iv.OK && c.OK
	}
	return iv
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
