package payments

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/kinds"
	schema "github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/suites"
)

func TestValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cases := []struct {
		change func(p *Params)
		want   string
	}{
		{func(p *Params) { p.Accounts = 1 }, "accounts must be at least 2"},
		{func(p *Params) { p.Orgs, p.UsersPerOrg = 1, 1 }, "at least 2 users"},
		{func(p *Params) { p.AmountMin, p.AmountMax = 10, 5 }, "amount_min <= amount_max"},
		{func(p *Params) { p.Mode = "stored" }, `mode "stored"`},
		{func(p *Params) { p.Durability = "fsync" }, `durability "fsync"`},
		{func(p *Params) { p.Isolation = "snapshot" }, `isolation "snapshot"`},
		{func(p *Params) { p.LockOrder = "random" }, `lock_order "random"`},
		{func(p *Params) { p.MaxTries = 0 }, "max_tries"},
		{func(p *Params) { p.DeleteFraction = 2 }, "delete_fraction"},
		{func(p *Params) { p.Faults.WrongCVV = -0.1 }, "fault wrong_cvv"},
		{func(p *Params) { p.Faults = schema.Faults{FrozenAccount: 0.5, FrozenCard: 0.5} }, "add up to 1"},
		{func(p *Params) { p.Transfers = 10 }, "not both"},
		{func(p *Params) { p.Workers = 0 }, "clients must be positive, got 0"},
		// Bounds (issue 15): each says its limit and why.
		{func(p *Params) { p.Workers = 1_000_000 }, "clients 1000000: at most"},
		{func(p *Params) { p.Accounts = 1 << 40 }, "accounts 1099511627776: at most 1000000000"},
		{func(p *Params) { p.Orgs, p.UsersPerOrg = 1<<30, 1<<30 }, "orgs 1073741824 × users_per_org 1073741824: at most 1000000 users, whose tokens are built in client memory"},
		{func(p *Params) { p.MaxTries = 1 << 30 }, "max_tries 1073741824: want 1 to 1000"},
		{func(p *Params) { p.StatsInterval = time.Nanosecond }, "stats_interval 1ns: want 0 (never) or at least 100ms"},
		{func(p *Params) { p.Duration = 1000 * time.Hour }, "duration 1000h0m0s: at most 24h0m0s"},
		{func(p *Params) { p.Duration, p.Transfers = 0, 1<<62 }, "ops 4611686018427387904: at most 1000000000000"},
		{func(p *Params) { p.InitialBalance = 1 << 62 }, "overflows"},
		{func(p *Params) { p.Selection = "zipf" }, `selection "zipf"`},
	}
	for _, c := range cases {
		p := DefaultParams()
		c.change(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// The suite's payments sections decode into Section strictly and plan into
// valid parameters for each of its stores, with the quick section on top.
func TestSuiteSpec(t *testing.T) {
	b, ok := suites.Open("payments")
	if !ok {
		t.Fatal("no payments suite")
	}
	var doc struct {
		Workloads []struct {
			Payments yaml.Node `yaml:"payments"`
		} `yaml:"workloads"`
		Load struct {
			Clients  int           `yaml:"clients"`
			Duration time.Duration `yaml:"duration"`
			Warmup   time.Duration `yaml:"warmup"`
		} `yaml:"load"`
		Quick struct {
			Duration time.Duration `yaml:"duration"`
			Warmup   time.Duration `yaml:"warmup"`
			Payments yaml.Node     `yaml:"payments"`
		} `yaml:"quick"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// strict decodes the sections in turn into one spec, each over the
	// last, as the scenario lays its quick section over an entry.
	strict := func(sections ...*yaml.Node) Section {
		var s Section
		for _, n := range sections {
			var out bytes.Buffer
			if err := yaml.NewEncoder(&out).Encode(n); err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(&out)
			dec.KnownFields(true)
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("payments section: %v", err)
			}
		}
		return s
	}
	full := strict(&doc.Workloads[0].Payments)
	quick := strict(&doc.Workloads[0].Payments, &doc.Quick.Payments)
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		k, _ := kinds.All().Lookup(kind)
		vs := full.Variants(k)
		if len(vs) != 1 || (kind == "sqlite") != (vs[0].Mode == store.PaymentsClient) || (kind == "sqlite") != (vs[0].Note != "") {
			t.Errorf("%s: variants %+v", kind, vs)
		}
		p, err := PlanParams(full, vs[0], 42, workload.Load{Clients: doc.Load.Clients, Duration: doc.Load.Duration, Warmup: doc.Load.Warmup})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if p.Accounts != 1_000_000 || p.Workers != 64 || p.Duration != 120*time.Minute || p.Warmup != 3*time.Minute || p.SteadyWindow != time.Hour || p.DeleteFraction != 0.05 {
			t.Errorf("%s full: %+v", kind, p)
		}
		q, err := PlanParams(quick, vs[0], 42, workload.Load{Clients: doc.Load.Clients, Duration: doc.Quick.Duration, Warmup: doc.Quick.Warmup})
		if err != nil {
			t.Fatalf("%s quick: %v", kind, err)
		}
		// --quick's steady window is its whole 6 s of an 8 s run (suites/payments.yaml).
		if q.Accounts != 10_000 || q.Duration+q.Warmup > 15*time.Second || q.SteadyWindow != 6*time.Second || q.SteadyWindow > q.Duration {
			t.Errorf("%s quick: %+v", kind, q)
		}
	}
	if _, err := PlanParams(full, Variant{Mode: store.PaymentsRoutine, Durability: store.PaymentsStrict}, 1, workload.Load{Clients: 4, Duration: time.Second, Pipeline: 4}); err == nil {
		t.Error("a pipeline was accepted")
	}
	zero := 0.0
	p, err := PlanParams(Section{DeleteFraction: &zero}, Variant{Mode: store.PaymentsClient, Durability: store.PaymentsRelaxed}, 7, workload.Load{Clients: 2, Ops: 100})
	if err != nil || p.DeleteFraction != 0 || p.Transfers != 100 || p.Duration != 0 || p.Warmup != 0 || p.Seed != 7 {
		t.Errorf("delete_fraction 0, ops 100: %+v, %v", p, err)
	}
}

// The data set is a function of the seed, and the faults hit the fraction
// of rows they say.
func TestDataSet(t *testing.T) {
	p := DefaultParams()
	p.Accounts = 20000
	p.Faults = schema.Faults{FrozenAccount: 0.1, ExpiredCard: 0.2}
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	a, b := newDataSet(p, now), newDataSet(p, now)
	orgs := map[int64]int{}
	frozen, expired := 0, 0
	for id := int64(1); id <= p.Accounts; id++ {
		if a.account(id) != b.account(id) || a.card(id) != b.card(id) {
			t.Fatalf("account %d differs between two data sets of one seed", id)
		}
		ac, c := a.account(id), a.card(id)
		orgs[ac.OrgID]++
		if ac.Frozen {
			frozen++
		}
		if c.Expires.Before(now) {
			expired++
		}
		if c.CVV < 100 || c.CVV > 999 || c.AccountID != id || ac.Balance != p.InitialBalance {
			t.Fatalf("card %+v, account %+v", c, ac)
		}
	}
	if len(orgs) != p.Orgs {
		t.Errorf("accounts in %d organizations, want %d", len(orgs), p.Orgs)
	}
	for org, n := range orgs {
		if n < 300 || n > 500 { // 400 expected
			t.Errorf("organization %d has %d accounts", org, n)
		}
	}
	if frozen < 1800 || frozen > 2200 || expired < 3700 || expired > 4300 {
		t.Errorf("frozen %d (want ~2000), expired %d (want ~4000)", frozen, expired)
	}
	p.Seed++
	if c := newDataSet(p, now); c.account(1) == a.account(1) && c.account(2) == a.account(2) && c.card(1) == a.card(1) {
		t.Error("another seed, the same data")
	}
	d := a.data()
	if len(d.Users) != 50 || len(d.Tokens) != 50*6 {
		t.Errorf("%d users, %d token rows", len(d.Users), len(d.Tokens))
	}
	seen := map[[16]byte]bool{}
	for _, tk := range d.Tokens {
		seen[tk.Hash] = true
	}
	if len(seen) != 50*tokenKinds {
		t.Errorf("%d distinct tokens, want %d", len(seen), 50*tokenKinds)
	}

	// Skewed picks: 80% in the first 20%, 64% in the first 4%.
	p.Selection = SelectSkewed
	s := newDataSet(p, now)
	r := rng{s: 1}
	hot, hotter := 0, 0
	for range 100000 {
		id := s.pick(&r)
		if id < 1 || id > p.Accounts {
			t.Fatalf("pick %d", id)
		}
		if id <= p.Accounts/5 {
			hot++
		}
		if id <= p.Accounts/25 {
			hotter++
		}
	}
	if hot < 79000 || hot > 81000 || hotter < 63000 || hotter > 65000 {
		t.Errorf("skewed: %d in the first 20%%, %d in the first 4%% of 100000", hot, hotter)
	}
}

// The series adds up, the steady state uses the last window and its CV
// flags a drop.
func TestSeriesAndSteadyState(t *testing.T) {
	w := &worker{}
	// 240 s at 100/s, except 60/s in minute 3 (a drop like the article's).
	for sec := range 240 {
		n := int32(100)
		if sec >= 120 && sec < 180 {
			n = 60
		}
		w.perSecond = append(w.perSecond, n)
		if sec%10 == 0 {
			w.buckets = append(w.buckets, counts{})
		}
		w.buckets[sec/10].committed += int64(n)
		w.buckets[sec/10].reasons[reasonWrongCVV]++
	}
	var s schema.Summary
	fillSeries(&s, []*worker{w, w}, 240*time.Second+500*time.Millisecond, 3*time.Minute)
	if len(s.PerSecond) != 241 || len(s.Per10s) != 24 || len(s.PerMinute) != 4 {
		t.Fatalf("%d seconds, %d 10-s buckets, %d minutes", len(s.PerSecond), len(s.Per10s), len(s.PerMinute))
	}
	if m := s.PerMinute[2]; m.Committed != 7200 || m.CommittedPerS != 120 || m.DeclinedBy["wrong_cvv"] != 120 {
		t.Errorf("minute 2: %+v", m)
	}
	if st := s.Steady; st.WindowS != 180 || st.BucketS != 60 || st.Buckets != 3 || st.MeanPerS != (200*120+120*60)/180.0 || st.CV < 0.2 {
		t.Errorf("steady state %+v", st)
	}
	s = schema.Summary{}
	fillSeries(&s, []*worker{w}, 240*time.Second, 60*time.Second)
	if st := s.Steady; st.WindowS != 60 || st.BucketS != 10 || st.MeanPerS != 100 || st.CV != 0 {
		t.Errorf("steady state over the last minute %+v", st)
	}
}

func TestEvaluate(t *testing.T) {
	p := DefaultParams()
	p.Accounts, p.InitialBalance = 10, 100
	minute := int64(29_000_000)
	journal := []store.PaymentsDeleted{{ID: 3, From: 1, To: 2, Amount: 5, CreatedUs: minute*60_000_000 + 1}}
	f := store.PaymentsFacts{Accounts: 10, SumBalance: 1000, Rows: 4, PerMinute: []store.PaymentsMinute{{Minute: minute, Count: 4}}}
	iv := evaluate(p, f, 5, 1, map[int64]int64{minute: 5}, journal)
	if !iv.OK || iv.String() != "invariants: ok" {
		t.Errorf("%s", iv)
	}
	sum := schema.Summary{Mode: "routine", CommittedPerS: 1234.4, Durability: "strict", Settings: store.PaymentsSettings{Durability: "fsync every commit (WAL)"},
		Steady: schema.SteadyState{WindowS: 60, MeanPerS: 1200, CV: 0.05}, Invariants: iv}
	if h := sum.Headline(); h != "routine mode: 1234 committed transfers/s (last 1m0s: 1200/s, cv 0.05), 0 declined, 0 retried, 0 errors, 0 deletes; durability strict: fsync every commit (WAL); invariants: ok" {
		t.Errorf("headline %q", h)
	}
	f.Rows, f.PerMinute[0].Count = 5, 5
	f.Mismatched, f.MismatchedCount = []store.PaymentsMismatch{{Account: 4, Balance: 90, Expected: 100}}, 1
	iv = evaluate(p, f, 5, 1, map[int64]int64{minute: 5}, journal)
	msg := iv.String()
	for _, want := range []string{"row count", "per-minute counts", "balances add up", "account 4: balance 90, want 100"} {
		if iv.OK || !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
}
