package ycsb

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/workloadtest"
	"github.com/storebench/storebench/internal/workload/ycsb/gen"
)

var openers = workloadtest.Openers

// runPhases runs p and checks its two phases: the load inserted every
// record, and nothing failed.
func runPhases(t *testing.T, st store.Store, p Params) (loaded, ran metrics.Phase) {
	t.Helper()
	phases, err := Run(context.Background(), st, p, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 || phases[0].Name != PhaseLoad || phases[1].Name != PhaseRun {
		t.Fatalf("phases %+v, want load and run", phases)
	}
	for _, ph := range phases {
		if len(ph.Errors) != 0 {
			t.Fatalf("%s: errors %v %q", ph.Name, ph.Errors, ph.ErrorSamples)
		}
	}
	if phases[0].Ops != p.WithDefaults().Records {
		t.Errorf("load phase inserted %d records, want %d", phases[0].Ops, p.Records)
	}
	return phases[0], phases[1]
}

// TestOpMixMatchesTable: each core workload's run phase draws its
// operations in its file's proportions (±2%), and records exactly the
// kinds it draws, adding up to the phase.
func TestOpMixMatchesTable(t *testing.T) {
	st := openers["memory"](t)
	for _, name := range DefaultWorkloads {
		t.Run(name, func(t *testing.T) {
			p := Params{Workload: name, Records: 500, Seed: 7, Load: workload.Load{Clients: 2, Ops: 20000}}
			_, ph := runPhases(t, st, p)
			props, err := gen.Standard(name)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			var sum int64
			for op := range gen.Op(gen.NumOps) {
				share := props.Proportion(op)
				if share == 0 {
					continue
				}
				want = append(want, opNames[op])
				got := ph.ByOp[opNames[op]]
				sum += got.Ops
				// 20,000 draws: the binomial's sd is at most 0.35%.
				if f := float64(got.Ops) / float64(ph.Ops); math.Abs(f-share) > 0.02 {
					t.Errorf("%s: %.3f of the ops, want %.3f ±0.02", opNames[op], f, share)
				}
			}
			var kinds []string
			for k := range ph.ByOp {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			slices.Sort(want)
			if !slices.Equal(kinds, want) || sum != ph.Ops || ph.Ops != 20000 {
				t.Errorf("kinds %v adding up to %d of %d ops, want %v adding up to all", kinds, sum, ph.Ops, want)
			}
			if name == "c" && (len(ph.ByOp) != 1 || ph.ByOp[OpRead].Ops != ph.Ops) {
				t.Errorf("C records %v, want only its reads", ph.ByOp)
			}
		})
	}
}

// checkRecords reads keys 0 to n-1 back: each must hold a well-formed
// record; key n must not exist.
func checkRecords(t *testing.T, st store.Store, p Params, n int64) {
	t.Helper()
	props, err := p.Props()
	if err != nil {
		t.Fatal(err)
	}
	core, err := gen.NewCore(props)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv := storetest.KVClient(t, st)
	ch := newChecker(core)
	for k := range n + 1 {
		key := core.AppendKey(nil, k)
		got, ok, err := kv.Get(ctx, key, nil)
		switch {
		case err != nil:
			t.Fatal(err)
		case k == n && ok:
			t.Fatalf("key number %d exists: more records than loaded and inserted", k)
		case k < n && !ok:
			t.Fatalf("key number %d (%s) is missing", k, key)
		case k < n:
			if err := ch.check(key, got, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestInsertsGrowTheKeySet: D's inserts add the records after the loaded
// ones, and its reads (latest) stay within what was inserted: a read of a
// key not there would be a mismatch error.
func TestInsertsGrowTheKeySet(t *testing.T) {
	st := openers["memory"](t)
	p := Params{Workload: "d", Records: 300, Seed: 3, Load: workload.Load{Clients: 3, Ops: 6000}}
	_, ph := runPhases(t, st, p)
	inserts := ph.ByOp[OpInsert].Ops
	if inserts < 200 {
		t.Fatalf("%d inserts of 6000 ops, want about 300", inserts)
	}
	checkRecords(t, st, p, p.Records+inserts)
}

// TestReadModifyWriteKeepsRecords: F's read-modify-writes rewrite one field
// (or, with writeallfields, all) and leave every record well formed.
func TestReadModifyWriteKeepsRecords(t *testing.T) {
	for _, props := range []map[string]string{nil, {"writeallfields": "true", "readallfields": "false"}, {"fieldlengthdistribution": "uniform", "fieldcount": "3"}} {
		st := openers["memory"](t)
		p := Params{Workload: "f", Records: 200, Properties: props, Seed: 5, Load: workload.Load{Clients: 2, Ops: 4000}}
		_, ph := runPhases(t, st, p)
		if ph.ByOp[OpRMW].Ops < 1500 {
			t.Fatalf("%v: %d read-modify-writes of 4000 ops", props, ph.ByOp[OpRMW].Ops)
		}
		checkRecords(t, st, p, p.Records)
	}
}

// TestBadRecordsAreMismatches: a record that does not decode into its
// fields is a mismatch, naming the key.
func TestBadRecordsAreMismatches(t *testing.T) {
	core, err := gen.NewCore(gen.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	w := newWorker(nil, core, 1, 1, nil)
	w.record()
	good := slices.Clone(w.rec)
	ch := newChecker(core)
	if err := ch.check([]byte("k"), good, nil); err != nil {
		t.Fatalf("a fresh record: %v", err)
	}
	renamed := slices.Clone(good)
	renamed[1] = 'X' // the first field's name
	for name, rec := range map[string][]byte{
		"truncated": good[:len(good)-1], "longer": append(slices.Clone(good), 0),
		"renamed": renamed, "empty": nil, "plain value": []byte("hello"),
	} {
		err := ch.check([]byte("user42"), rec, nil)
		if err == nil || errclass.Classify(err) != errclass.ClassMismatch || !errors.Is(err, workload.ErrMismatch) || !strings.Contains(err.Error(), "user42") {
			t.Errorf("%s: %v, want a mismatch naming the key", name, err)
		}
	}
}

// TestRedis runs A and D on a managed Redis: every read finds a
// well-formed record.
func TestRedis(t *testing.T) {
	st := openers["redis"](t)
	for _, name := range []string{"a", "d"} {
		p := Params{Workload: name, Records: 200, Seed: 11, Load: workload.Load{Clients: 2, Ops: 2000}}
		_, ph := runPhases(t, st, p)
		checkRecords(t, st, p, p.Records+ph.ByOp[OpInsert].Ops)
	}
}

// TestRefusedBeforeWork: what cannot run is refused by Validate, and Run
// refuses it without touching the store.
func TestRefusedBeforeWork(t *testing.T) {
	ctx := context.Background()
	st := openers["memory"](t)
	untouched := workloadtest.Untouched(t, st)
	ok := workload.Load{Clients: 1, Ops: 10}
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Workload: "e", Load: ok}, "ycsb e: scans (scanproportion 0.95) need a store that can scan in key order"},
		{Params{Workload: "a", Properties: map[string]string{"scanproportion": "0.1"}, Load: ok}, "need a store that can scan in key order"},
		{Params{Workload: "g", Load: ok}, `unknown core workload "g" (valid: a, b, c, d, e, f)`},
		{Params{Workload: "a", Properties: map[string]string{"readproportoin": "1"}, Load: ok}, `unknown property "readproportoin"`},
		{Params{Workload: "a", Properties: map[string]string{"recordcount": "many"}, Load: ok}, `properties: recordcount="many": not a 64-bit integer`},
		{Params{Workload: "a", Properties: map[string]string{"operationcount": "-3"}}, `property operationcount="-3": want a positive count`},
		{Params{Workload: "a", Properties: map[string]string{"dataintegrity": "true"}, Load: ok}, "dataintegrity=true is not supported"},
		{Params{Workload: "a", Properties: map[string]string{"requestdistribution": "hotspot"}, Load: ok}, "hotspot"},
		{Params{Workload: "a", Records: -1, Load: ok}, "records"},
		{Params{Workload: "a", Load: workload.Load{Clients: 2, Ops: 10, Pipeline: 4}}, "--pipeline is not supported"},
	} {
		if err := c.p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Validate %v, want one saying %q", c.p, err, c.want)
		}
		if _, err := Run(ctx, st, c.p, workload.Hooks{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Run %v, want one saying %q", c.p, err, c.want)
		}
	}
	untouched()
}

// TestCountsFromProperties: recordcount and operationcount give the
// records and the run's ops where the entry and the load do not, and
// records and ops beat them where they do.
func TestCountsFromProperties(t *testing.T) {
	props := map[string]string{"recordcount": "50", "operationcount": "70"}
	for _, c := range []struct {
		p            Params
		records, ops int64
	}{
		{Params{Workload: "a", Properties: props}, 50, 70},
		{Params{Workload: "a", Records: 20, Properties: props, Load: workload.Load{Ops: 30}}, 20, 30},
		{Params{Workload: "a"}, DefaultRecords, DefaultOps},
	} {
		loaded, ran := runPhases(t, openers["memory"](t), c.p)
		got, err := c.p.Props()
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Ops != c.records || ran.Ops != c.ops || got.RecordCount != c.records || got.OperationCount != c.ops {
			t.Errorf("%+v: loaded %d, ran %d, properties %d and %d; want %d records and %d ops", c.p, loaded.Ops, ran.Ops, got.RecordCount, got.OperationCount, c.records, c.ops)
		}
	}
}
