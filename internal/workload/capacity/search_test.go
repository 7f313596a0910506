package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
)

// queueModel makes the phases of an idealized target in memory, instantly:
// below its capacity every op takes about base (uniform ±10%); above it,
// it serves capacity ops/s and the rest queue, so latency and the backlog
// grow through the phase. It tests the search's logic alone; the tests
// with known answers on real stores are in capacity_store_test.go.
type queueModel struct {
	capacity float64
	base     time.Duration
	// clientLimited marks the phases above capacity as the client's doing.
	clientLimited bool
	rng           *rand.Rand
	ran           time.Duration // measured time asked for
}

func (q *queueModel) step(_ context.Context, r StepRequest) (metrics.Phase, error) {
	q.ran += r.Duration
	secs := int(math.Ceil(r.Duration.Seconds()))
	served := min(r.Rate, q.capacity)
	h := metrics.NewHistogram()
	p := metrics.Phase{Name: r.Name, DurationS: r.Duration.Seconds(), OpenLoop: &metrics.OpenLoop{TargetOpsS: r.Rate}}
	for s := range secs {
		backlog := int64((r.Rate - served) * float64(s+1))
		n := int64(served)
		for range n {
			lat := time.Duration(float64(q.base) * (0.9 + 0.2*q.rng.Float64()))
			if backlog > 0 { // waits behind the queue, as the open loop counts it
				lat += time.Duration(float64(backlog) / served * float64(time.Second) * q.rng.Float64())
			}
			_ = h.RecordValue(int64(lat))
		}
		p.Ops += n
		p.Series = append(p.Series, metrics.Second{T: int64(s), Ops: n, Backlog: backlog})
	}
	p.ThroughputOpsS = float64(p.Ops) / p.DurationS
	p.ClientCPUS = float64(p.Ops) * 2e-6
	p.Server = &metrics.ServerCost{CPUS: float64(p.Ops) * 8e-6}
	if r.Rate > q.capacity {
		p.OpenLoop.UnsentOps = int64((r.Rate - served) * r.Duration.Seconds())
		p.OpenLoop.ClientSaturated = q.clientLimited
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	p.Histogram = string(enc)
	return p, err
}

func newModel(capacity float64, base time.Duration) *queueModel {
	return &queueModel{capacity: capacity, base: base, rng: rand.New(rand.NewPCG(3, 4))}
}

func modelParams(slo string) Params {
	s, err := ParseSLO(slo)
	if err != nil {
		panic(err)
	}
	return Params{SLOs: []SLO{s}, StartRate: 1000, MinStep: time.Second, MaxStep: 4 * time.Second, Need: 50000}
}

func TestSearchFindsTheModelsCapacity(t *testing.T) {
	q := newModel(7300, 200*time.Microsecond)
	sum, phases, err := Run(context.Background(), Drive{Step: q.step}, modelParams("p99<=1ms,p50<=300us"))
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity[0]
	if !c.Found || c.AtLeast || c.OpsS > 7300 || c.OpsS < 7300*0.96 {
		t.Fatalf("capacity %+v, want just under 7300", c)
	}
	conf := sum.Steps[c.Confirm]
	if conf.Stage != "confirm" || !conf.Passed || conf.OfferedOpsS != c.OpsS {
		t.Fatalf("confirming step %+v", conf)
	}
	stages := map[string]int{}
	for _, st := range sum.Steps {
		stages[st.Stage]++
		if st.Passed != (st.OfferedOpsS <= 7300) {
			t.Errorf("step at %v ops/s: %s", st.OfferedOpsS, st.Verdict)
		}
	}
	if stages["ramp"] < 4 || stages["bisect"] < 1 || stages["confirm"] != 1 {
		t.Errorf("stages %v", stages)
	}
	if len(phases) < len(sum.Steps) {
		t.Errorf("%d phases for %d steps", len(phases), len(sum.Steps))
	}
	// 10 µs of CPU per op (2 client + 8 server) × 50k ops/s = 0.5 cores.
	if c.Cost == nil || math.Abs(c.Cost.CoresNeededExtrapolated-0.5) > 0.01 || !c.Cost.BeyondCapacity || !strings.Contains(c.Cost.Basis, "server + client") {
		t.Errorf("cost %+v", c.Cost)
	}
	if !strings.Contains(c.Reason, "missed") {
		t.Errorf("reason %q", c.Reason)
	}
}

// A step too short for its percentile's interval is extended, and says how
// wide the interval was.
func TestStepExtendsUntilTheIntervalIsNarrow(t *testing.T) {
	q := newModel(1e6, 200*time.Microsecond)
	p := modelParams("p99.9<=1ms")
	p.StartRate, p.MaxRate, p.MinRate = 1000, 1000, 1000
	p.MaxStep = 20 * time.Second
	p.CIShare = 0.05
	sum, _, err := Run(context.Background(), Drive{Step: q.step}, p)
	if err != nil {
		t.Fatal(err)
	}
	st := sum.Steps[0]
	// 1000 ops in the first second leave p99.9's interval open: bounding
	// it takes z²·0.999/0.001 ≈ 3840 samples.
	if len(st.Phases) < 2 || st.Percentiles[0].Open || st.Percentiles[0].WidthShare > 0.05 {
		t.Fatalf("step %+v", st)
	}
	if !sum.Capacity[0].AtLeast {
		t.Errorf("capacity %+v: the search topped out, so at least", sum.Capacity[0])
	}
}

func TestSearchSaysWhenNoRateMeetsTheSLO(t *testing.T) {
	q := newModel(5000, 2*time.Millisecond)
	sum, _, err := Run(context.Background(), Drive{Step: q.step}, modelParams("p99<=1ms"))
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity[0]
	if c.Found || c.OpsS != 0 || c.LowestTriedOpsS > 20 || !strings.HasPrefix(c.Reason, "no rate meets the SLO") {
		t.Fatalf("capacity %+v", c)
	}
	if len(sum.Steps) < 5 {
		t.Fatalf("%d steps", len(sum.Steps))
	}
}

func TestClientLimitedCapacityIsAtLeast(t *testing.T) {
	q := newModel(7300, 200*time.Microsecond)
	q.clientLimited = true
	sum, _, err := Run(context.Background(), Drive{Step: q.step}, modelParams("p99<=1ms"))
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Capacity[0]; !c.Found || !c.AtLeast || !strings.Contains(c.Reason, "at least") {
		t.Fatalf("capacity %+v", c)
	}
}

// BenchmarkSearchOverhead: the share of a search's wall time spent outside
// the measured steps, with steps that cost nothing but their bookkeeping
// (the model makes phases instantly; the search's own work is merging
// histograms, intervals and slopes). It reports the overhead per measured
// second, which a real search adds to each step's time.
func BenchmarkSearchOverhead(b *testing.B) {
	var overhead, measured time.Duration
	for range b.N {
		q := newModel(7300, 200*time.Microsecond)
		begin := time.Now()
		if _, _, err := Run(context.Background(), Drive{Step: q.step}, modelParams("p99<=1ms,p50<=300us")); err != nil {
			b.Fatal(err)
		}
		overhead += time.Since(begin)
		measured += q.ran
	}
	b.ReportMetric(float64(overhead)/float64(measured)*100, "%-of-measured")
}

// A rate is reported only once a step at it passed: when confirmations
// miss, the search steps down (5%, 10%, 20%, ...) and, when none passes,
// says that no rate was confirmed rather than report one.
func TestUnconfirmedRateIsNotReported(t *testing.T) {
	q := newModel(7300, 200*time.Microsecond)
	confirmRates := []float64{}
	step := func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		if strings.Contains(r.Name, "confirm") {
			confirmRates = append(confirmRates, r.Rate)
			q.base = 5 * time.Millisecond // the target slows down for good
		}
		return q.step(ctx, r)
	}
	sum, _, err := Run(context.Background(), Drive{Step: step}, modelParams("p99<=1ms"))
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity[0]
	if c.Found || c.OpsS != 0 || !strings.HasPrefix(c.Reason, "no rate confirmed") || c.PassedOnceOpsS < 4000 {
		t.Fatalf("capacity %+v: want none confirmed, and the highest rate passed once", c)
	}
	if len(confirmRates) != confirmTries {
		t.Fatalf("confirmations at %v, want %d", confirmRates, confirmTries)
	}
	for i := 1; i < len(confirmRates); i++ {
		if confirmRates[i] >= confirmRates[i-1] {
			t.Fatalf("confirmations at %v do not step down", confirmRates)
		}
	}
}

// runShakyAbove searches a 7,300 ops/s model (200 µs per op) at p99 ≤ 1 ms
// in 10 steps, where above rate every confirmation misses (5 ms per op)
// and, when pass is not 0, every other step takes pass per op.
func runShakyAbove(t *testing.T, rate float64, pass time.Duration) *schema.Summary {
	t.Helper()
	q := newModel(7300, 200*time.Microsecond)
	step := func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		base := q.base
		switch {
		case r.Rate > rate && strings.Contains(r.Name, "confirm"):
			q.base = 5 * time.Millisecond
		case r.Rate > rate && pass > 0:
			q.base = pass
		}
		ph, err := q.step(ctx, r)
		q.base = base
		return ph, err
	}
	p := modelParams("p99<=1ms")
	p.MaxSteps = 10
	sum, _, err := Run(context.Background(), Drive{Step: step}, p)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Confirmations that miss near the top (a p99 sitting on the bound) and a
// step budget that allows only a few: the last one goes down to a rate a
// step passed, instead of reporting none as if the lowest rate had missed
// (a quick run of Redis at p99 ≤ 1 ms did).
func TestLastConfirmationFallsBackToAPassedRate(t *testing.T) {
	const shaky = 4500.0 // confirmations above this rate miss
	sum := runShakyAbove(t, shaky, 0)
	c := sum.Capacity[0]
	if !c.Found || c.OpsS > shaky {
		t.Fatalf("capacity %+v after steps %+v: want one confirmed at or below %v", c, sum.Steps, shaky)
	}
	passedOnce := false
	for _, st := range sum.Steps {
		passedOnce = passedOnce || st.Stage != schema.StageConfirm && st.Passed && st.OfferedOpsS == c.OpsS
	}
	if !passedOnce {
		t.Errorf("confirmed %v ops/s, which no ramp or bisection step passed: %+v", c.OpsS, sum.Steps)
	}
}

// Passes near the bound above a rate (p99 0.88 ms of 1 ms) whose
// confirmations miss: the last confirmation goes to the highest clear
// pass, not to another pass on the edge (a quick Redis search on a full
// 2-vCPU machine reported none so).
func TestLastConfirmationPrefersAClearPass(t *testing.T) {
	const edge = 3000.0 // passes above this rate sit near the bound; confirmations there miss
	sum := runShakyAbove(t, edge, 800*time.Microsecond)
	c := sum.Capacity[0]
	if !c.Found || c.OpsS > edge {
		t.Fatalf("capacity %+v after steps %+v: want one confirmed at or below %v", c, sum.Steps, edge)
	}
	edgy := false
	for _, st := range sum.Steps {
		edgy = edgy || st.Stage != schema.StageConfirm && st.Passed && st.OfferedOpsS > edge
	}
	if !edgy {
		t.Errorf("no pass near the bound above %v, so nothing was preferred: %+v", edge, sum.Steps)
	}
}

// Steps that run out while the ramp still passes once left no
// confirmation and no failed step (it panicked on a quick capacity run of
// the memory store). Now the search keeps its last step for confirming the
// highest rate passed, reported as a lower bound.
func TestStepsRunOutBeforeAConfirmation(t *testing.T) {
	q := newModel(1e7, 10*time.Microsecond)
	p := modelParams("p99<=1ms")
	p.MaxSteps = 3
	sum, _, err := Run(context.Background(), Drive{Step: q.step}, p)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity[0]
	if !c.Found || !c.AtLeast || c.Confirm != 2 || sum.Steps[2].Stage != schema.StageConfirm || c.OpsS != sum.Steps[1].OfferedOpsS {
		t.Fatalf("capacity %+v, steps %+v: want the third step to confirm the second's rate, at least", c, sum.Steps)
	}
}

// A search whose ramp and bisection would use every step keeps some for
// the confirmation (a quick run of 10 steps confirmed nothing otherwise).
func TestConfirmationHasStepsLeft(t *testing.T) {
	q := newModel(50000, 50*time.Microsecond)
	p := modelParams("p99<=1ms")
	p.MaxSteps, p.Precision = 10, 0.005
	sum, _, err := Run(context.Background(), Drive{Step: q.step}, p)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity[0]
	if !c.Found || c.Confirm < 0 || len(sum.Steps) > 10 {
		t.Fatalf("capacity %+v after %d steps: want one confirmed within 10", c, len(sum.Steps))
	}
}

// A cell that runs a companion beside its target (cache-aside's cache)
// serves each request on both servers: the CPU per op at capacity counts
// both.
func TestServerCPUCountsTheCompanion(t *testing.T) {
	q := newModel(1e6, 200*time.Microsecond)
	step := func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		p, err := q.step(ctx, r)
		p.Companion = &metrics.ServerCost{CPUS: float64(p.Ops) * 3e-6}
		return p, err
	}
	p := modelParams("p99<=1ms")
	p.StartRate, p.MaxRate, p.MinRate = 1000, 1000, 1000
	sum, _, err := Run(context.Background(), Drive{Step: step}, p)
	if err != nil {
		t.Fatal(err)
	}
	// The model's server costs 8 µs an op, the companion 3.
	if got := sum.Capacity[0].ServerCPUUs; math.Abs(got-11) > 0.01 {
		t.Fatalf("server CPU at capacity %v µs/op, want 8 + 3", got)
	}
}

// A confirmation that misses while the kernel swaps client and server
// between CPUs, after a ramp step at a higher rate passed with each on one
// CPU, is the platform's placement, with both steps' figures; a miss with
// each on its own CPU stays the store's.
func TestSearchNamesThePlatformsPlacement(t *testing.T) {
	q := newModel(7300, 200*time.Microsecond)
	confirms := 0
	drive := Drive{Step: func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		moved := false
		if strings.Contains(r.Name, "confirm") && !strings.Contains(r.Name, "+") {
			confirms++
			moved = confirms == 1
		}
		if moved {
			q.capacity = 2000 // the swapped pair carries far less
		}
		p, err := q.step(ctx, r)
		q.capacity = 7300
		p.Placement = &metrics.Placement{Client: map[int]float64{0: 1}, Server: map[int]float64{1: 1}, Samples: 5}
		if moved {
			p.Placement = &metrics.Placement{Client: map[int]float64{0: 0.56, 1: 0.44}, Server: map[int]float64{0: 0.41, 1: 0.59}, Samples: 5}
		}
		return p, err
	}}
	sum, _, err := Run(context.Background(), drive, modelParams("p99<=1ms"))
	if err != nil {
		t.Fatal(err)
	}
	var placed, store int
	for i, st := range sum.Steps {
		switch {
		case st.Passed:
			if st.Limiter != "" || st.ClientMainCPU != 1 || st.ServerMainCPU != 1 {
				t.Errorf("step %d passed with limiter %q, main CPU %v/%v", i+1, st.Limiter, st.ClientMainCPU, st.ServerMainCPU)
			}
		case st.Moved():
			placed++
			if st.Limiter != schema.LimiterPlacement || !strings.Contains(st.Verdict, "platform placement: the kernel moved client and server between CPUs (each on the CPU it used most 56% and 59%") ||
				!strings.Contains(st.LimiterEvidence, "met the SLO with each on one CPU (100% and 100%)") {
				t.Errorf("moved step %d: limiter %q, verdict %q", i+1, st.Limiter, st.Verdict)
			}
			if strings.Contains(st.Verdict, "; "+schema.LimiterStore+":") {
				t.Errorf("moved step %d keeps its old limiter's words: %q", i+1, st.Verdict)
			}
		default:
			store++
			if st.Limiter != schema.LimiterStore {
				t.Errorf("step %d at %v ops/s missed on its own CPUs: limiter %q", i+1, st.OfferedOpsS, st.Limiter)
			}
		}
	}
	if placed != 1 || store == 0 {
		t.Errorf("%d steps bounded by placement, %d by the store; want 1 and some", placed, store)
	}
	if c := sum.Capacity[0]; !c.Found || c.OpsS > 7300 {
		t.Errorf("capacity %+v", c)
	}
}
