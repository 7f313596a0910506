package mix

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

// openers open real stores (workloadtest).
var openers = workloadtest.Openers

func ratio(r float64) *float64 { return &r }

// runOne runs a mix and returns its single phase, failing t on any error.
func runOne(t *testing.T, st store.Store, p Params) metrics.Phase {
	t.Helper()
	phases, err := Run(context.Background(), st, p, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || phases[0].Name != PhaseMix {
		t.Fatalf("phases %+v, want one called mix", phases)
	}
	return phases[0]
}

// checkByOp checks that the kinds add up to the phase and returns the gets' share.
func checkByOp(t *testing.T, ph metrics.Phase) float64 {
	t.Helper()
	get, set := ph.ByOp[OpGet], ph.ByOp[OpSet]
	if len(ph.ByOp) != 2 || get.Ops+set.Ops != ph.Ops || ph.Ops == 0 {
		t.Fatalf("phase ops %d, by op %+v: the kinds must add up to the phase", ph.Ops, ph.ByOp)
	}
	for name, o := range ph.ByOp {
		if o.Ops > 0 && (o.LatencyUs.P50 <= 0 || o.LatencyUs.Max < o.LatencyUs.P99 || o.ThroughputOpsS <= 0) {
			t.Errorf("%s figures %+v", name, o)
		}
	}
	return float64(get.Ops) / float64(ph.Ops)
}

func TestRatioIsHonoured(t *testing.T) {
	st := openers["memory"](t)
	for _, r := range []float64{0, 0.25, 0.9, 1} {
		ph := runOne(t, st, Params{Keyspace: workload.Keyspace{Keys: 1000, Seed: 3}, ReadRatio: ratio(r), Load: workload.Load{Clients: 4, Ops: 4000}})
		if len(ph.Errors) != 0 {
			t.Fatalf("ratio %v: errors %v %q", r, ph.Errors, ph.ErrorSamples)
		}
		got := checkByOp(t, ph)
		// 4,000 draws: the binomial's sd is at most 0.8%; 3% is ~4 sd.
		if math.Abs(got-r) > 0.03 || (r == 0 || r == 1) && got != r {
			t.Errorf("read ratio %v: %.3f of the ops were gets", r, got)
		}
	}
}

// TestZipfianVerifiesOnServers runs a skewed 50/50 mix against real
// servers: every get must return what the populate and the sets wrote.
func TestZipfianVerifiesOnServers(t *testing.T) {
	for _, name := range []string{"memory", "redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			st := openers[name](t)
			ph := runOne(t, st, Params{Keyspace: workload.Keyspace{Keys: 2000, ValueSize: 64, Seed: 9}, ReadRatio: ratio(0.5), KeyDist: keydist.Zipfian,
				Load: workload.Load{Clients: 4, Ops: 3000}})
			if len(ph.Errors) != 0 {
				t.Fatalf("errors %v: %q", ph.Errors, ph.ErrorSamples)
			}
			if got := checkByOp(t, ph); math.Abs(got-0.5) > 0.05 {
				t.Errorf("%.3f of the ops were gets, want ~0.5", got)
			}
		})
	}
}

// TestMismatchIsCounted tampers with the populated keyspace: each get of
// the tampered keys is a mismatch, and nothing else fails.
func TestMismatchIsCounted(t *testing.T) {
	ctx := context.Background()
	st := openers["memory"](t)
	p := Params{Keyspace: workload.Keyspace{Keys: 10, Seed: 5}, ReadRatio: ratio(1), KeyDist: keydist.Sequential, Load: workload.Load{Clients: 1, Ops: 100}}.WithDefaults()
	if err := workload.Populate(ctx, st, p.Keyspace, 1); err != nil {
		t.Fatal(err)
	}
	kv := storetest.KVClient(t, st)
	if err := kv.Delete(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 3)); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 5), []byte("tampered"), 0); err != nil {
		t.Fatal(err)
	}
	sp, err := keydist.New(p.KeyDist, p.Keys)
	if err != nil {
		t.Fatal(err)
	}
	ph, err := measure(ctx, []store.KV{kv}, p, sp, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	// Sequential over 10 keys, 100 gets: keys 3 and 5 are read 10 times each.
	if ph.Errors[string(errclass.ClassMismatch)] != 20 || len(ph.Errors) != 1 || ph.ByOp[OpGet].Errors[string(errclass.ClassMismatch)] != 20 {
		t.Fatalf("errors %v, get errors %v; want 20 mismatches", ph.Errors, ph.ByOp[OpGet].Errors)
	}
}

func TestDurationModeAddsUp(t *testing.T) {
	st := openers["memory"](t)
	ph := runOne(t, st, Params{Keyspace: workload.Keyspace{Keys: 500, Seed: 1}, KeyDist: keydist.Sequential,
		Load: workload.Load{Clients: 2, Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond, Rate: 2000}})
	checkByOp(t, ph)
	if ph.OpenLoop == nil || ph.Warmup.DurationS < 0.04 {
		t.Errorf("open loop %+v, warm-up %+v", ph.OpenLoop, ph.Warmup)
	}
}

// TestBadParamsFailBeforeWork: a key written before the run survives it,
// so the run cannot have reset or populated the store.
func TestBadParamsFailBeforeWork(t *testing.T) {
	ctx := context.Background()
	st := openers["memory"](t)
	untouched := workloadtest.Untouched(t, st)
	ok := workload.Load{Clients: 1, Ops: 10}
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{ReadRatio: ratio(-0.1), Load: ok}, "read ratio must be between 0"},
		{Params{ReadRatio: ratio(1.5), Load: ok}, "read ratio must be between 0"},
		{Params{ReadRatio: ratio(math.NaN()), Load: ok}, "read ratio must be between 0"},
		{Params{KeyDist: "hotspot", Load: ok}, "valid: uniform, zipfian, sequential"},
		{Params{Load: workload.Load{Clients: 2, Ops: 10, Pipeline: 4}}, "mix: --pipeline is not supported"},
		{Params{Keyspace: workload.Keyspace{Keys: -1}, Load: ok}, "keyspace must be positive"},
		{Params{Keyspace: workload.Keyspace{KeyMode: "hex"}, Load: ok}, "unknown key mode"},
	} {
		_, err := Run(ctx, st, c.p, workload.Hooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.p, err, c.want)
		}
	}
	untouched()
}
