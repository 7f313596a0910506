package payments

import (
	"fmt"
	"math"
	"sort"
	"time"

	schema "github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/store"
)

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

// fillSeries fills the per-second, per-10 s and per-minute figures and the
// steady state from the workers' counts over a measured duration d.
func fillSeries(s *schema.Summary, ws []*worker, d time.Duration, window time.Duration) {
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
	bucket := func(start int64, width int64, cs []counts) schema.Bucket {
		var c counts
		for i := range cs {
			c.add(&cs[i])
		}
		secs := math.Min(float64(width), d.Seconds()-float64(start))
		secs = math.Max(secs, 0)
		b := schema.Bucket{StartS: start, Seconds: secs, Committed: c.committed, Declined: c.declined,
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
	s.Steady = schema.SteadyState{WindowS: float64(win), MeanPerS: float64(sum) / float64(win)}
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
func evaluate(p Params, f store.PaymentsFacts, committed, deleted int64, clientMinutes map[int64]int64, journal []store.PaymentsDeleted) schema.Invariants {
	var iv schema.Invariants
	add := func(name string, ok bool, detail string, rows []string) {
		iv.Checks = append(iv.Checks, schema.Check{Name: name, OK: ok, Detail: detail, Rows: rows})
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
