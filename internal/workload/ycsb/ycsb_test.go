package ycsb

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/target"
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

// checkRecords reads keys 0 to n-1 back, as the store keeps them (its own
// records after Run set them up, else one value each): each must hold a
// well-formed record; key n must not exist.
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
	var conn store.RecordsConn
	if rs, ok := st.(store.Records); ok {
		if conn, err = rs.RecordsOpen(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
	} else {
		var names [][]byte
		for i := range props.FieldCount {
			names = append(names, core.AppendFieldName(nil, i))
		}
		conn = newValueRecords(storetest.KVClient(t, st), names, recordBytes(props))
	}
	ch := newChecker(core)
	got := make([][]byte, props.FieldCount)
	for k := range n + 1 {
		key := core.AppendKey(nil, k)
		ok, err := conn.Read(ctx, key, -1, got)
		switch {
		case err != nil:
			t.Fatal(err)
		case k == n && ok:
			t.Fatalf("key number %d exists: more records than loaded and inserted", k)
		case k < n && !ok:
			t.Fatalf("key number %d (%s) is missing", k, key)
		case k < n:
			if err := ch.check(key, got, -1); err != nil {
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
	if ph.MultiCall {
		t.Error("a record as one value is one call an op, yet the phase says several")
	}
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

// TestBadRecordsAreMismatches: a value that does not decode into the
// record's fields, or a field out of the length's bounds, is a mismatch,
// naming the key.
func TestBadRecordsAreMismatches(t *testing.T) {
	core, err := gen.NewCore(gen.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	props := core.Properties()
	kv := storetest.KVClient(t, openers["memory"](t))
	var names [][]byte
	for i := range props.FieldCount {
		names = append(names, core.AppendFieldName(nil, i))
	}
	v := newValueRecords(kv, names, recordBytes(props))
	w := newWorker(v, core, 1, 1, nil)
	w.record()
	ctx := context.Background()
	if err := v.Insert(ctx, []byte("k"), w.vals); err != nil {
		t.Fatal(err)
	}
	good, _, err := kv.Get(ctx, []byte("k"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := newChecker(core)
	got := make([][]byte, props.FieldCount)
	if ok, err := v.Read(ctx, []byte("k"), -1, got); !ok || err != nil || ch.check([]byte("k"), got, -1) != nil {
		t.Fatalf("a fresh record: %v, %v", ok, err)
	}
	renamed := slices.Clone(good)
	renamed[1] = 'X' // the first field's name
	isMismatch := func(name string, err error) {
		t.Helper()
		if err == nil || errclass.Classify(err) != errclass.ClassMismatch || !errors.Is(err, workload.ErrMismatch) || !strings.Contains(err.Error(), "user42") {
			t.Errorf("%s: %v, want a mismatch naming the key", name, err)
		}
	}
	for name, rec := range map[string][]byte{
		"truncated": good[:len(good)-1], "longer": append(slices.Clone(good), 0),
		"renamed": renamed, "empty": {}, "plain value": []byte("hello"),
	} {
		if err := kv.Set(ctx, []byte("user42"), rec, 0); err != nil {
			t.Fatal(err)
		}
		_, err := v.Read(ctx, []byte("user42"), -1, got)
		isMismatch(name, err)
	}
	short := slices.Clone(w.vals)
	short[3] = short[3][:5]
	isMismatch("a short field", ch.check([]byte("user42"), short, -1))
	isMismatch("a short field asked for", ch.check([]byte("user42"), short, 3))
	if err := ch.check([]byte("user42"), short, 2); err != nil {
		t.Errorf("another field asked for: %v", err)
	}
}

// TestRedis runs A, D and E on a managed Redis, whose records are hashes:
// every read finds a well-formed record, E's scans run through the index.
func TestRedis(t *testing.T) {
	st := openers["redis"](t)
	for _, name := range []string{"a", "d", "e"} {
		p := Params{Workload: name, Records: 200, Seed: 11, Load: workload.Load{Clients: 2, Ops: 2000}}
		loaded, ph := runPhases(t, st, p)
		if !loaded.MultiCall || !ph.MultiCall {
			t.Errorf("%s: phases not marked as several server calls an op (an insert is HSET and ZADD)", name)
		}
		if !slices.ContainsFunc(ph.Notes, func(n string) bool { return strings.HasPrefix(n, "records: a hash per record") }) {
			t.Errorf("%s: notes %q say no hash layout", name, ph.Notes)
		}
		if name == "e" && ph.ByOp[OpScan].Ops < 1700 {
			t.Errorf("e: %d scans of 2000 ops", ph.ByOp[OpScan].Ops)
		}
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
		{Params{Workload: "e", Load: ok, Layout: LayoutValue}, "ycsb e: scans (scanproportion 0.95) need a store that scans in key order, and this one keeps each record as one value"},
		{Params{Workload: "a", Properties: map[string]string{"scanproportion": "0.1"}, Load: ok, Layout: LayoutValue}, "need a store that scans in key order"},
		{Params{Workload: "a", Load: ok, Layout: LayoutRecords}, "planned for layout records, but the store's is value"},
		{Params{Workload: "g", Load: ok}, `unknown core workload "g" (valid: a, b, c, d, e, f)`},
		{Params{Workload: "a", Properties: map[string]string{"readproportoin": "1"}, Load: ok}, `unknown property "readproportoin"`},
		{Params{Workload: "a", Properties: map[string]string{"recordcount": "many"}, Load: ok}, `properties: recordcount="many": not a 64-bit integer`},
		{Params{Workload: "a", Properties: map[string]string{"operationcount": "-3"}}, `property operationcount="-3": want a positive count`},
		{Params{Workload: "a", Properties: map[string]string{"dataintegrity": "true"}, Load: ok}, "dataintegrity=true is not supported"},
		{Params{Workload: "a", Properties: map[string]string{"requestdistribution": "hotspot"}, Load: ok}, "hotspot"},
		{Params{Workload: "a", Records: -1, Load: ok}, "records"},
		{Params{Workload: "a", Load: workload.Load{Clients: 2, Ops: 10, Pipeline: 4}}, "--pipeline is not supported"},
	} {
		if err := c.p.Validate(); c.p.Layout != LayoutRecords && (err == nil || !strings.Contains(err.Error(), c.want)) {
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

// TestPostgresRecords runs A and E on a managed PostgreSQL, whose records
// are rows of its usertable: every read finds a well-formed row, E's scans
// run and read whole records, and both phases say the layout.
func TestPostgresRecords(t *testing.T) {
	st := openers["postgres"](t)
	for _, name := range []string{"a", "e"} {
		p := Params{Workload: name, Records: 300, Seed: 13, Load: workload.Load{Clients: 2, Ops: 1500}}
		loaded, ph := runPhases(t, st, p)
		for _, ph := range []metrics.Phase{loaded, ph} {
			if !slices.ContainsFunc(ph.Notes, func(n string) bool {
				return strings.Contains(n, "records: a row per record") && strings.Contains(n, "usertable")
			}) {
				t.Errorf("%s %s: notes %q say no usertable layout", name, ph.Name, ph.Notes)
			}
		}
		if name == "e" && (ph.ByOp[OpScan].Ops < 1300 || ph.ByOp[OpInsert].Ops == 0) {
			t.Errorf("e: %d scans and %d inserts of 1500 ops", ph.ByOp[OpScan].Ops, ph.ByOp[OpInsert].Ops)
		}
		checkRecords(t, st, p, p.Records+ph.ByOp[OpInsert].Ops)
	}
}

// TestLayoutByKind: the plan gives each kind's cells its layout, refuses
// E where a record is one value, in one line naming the store, and a
// connection per op on a store's own records.
func TestLayoutByKind(t *testing.T) {
	reg := kinds.All()
	kind := func(name string) target.Kind {
		k, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("no kind %s", name)
		}
		return k
	}
	ok := workload.Load{Clients: 1, Ops: 10}
	for _, c := range []struct {
		kind, ycsb string
		load       workload.Load
		layout     string
		refused    string
	}{
		{"postgres", "e", ok, LayoutRecords, ""},
		{"redis", "e", ok, LayoutRecords, ""},
		{"valkey", "e", ok, LayoutRecords, ""},
		{"sqlite", "e", ok, LayoutRecords, ""},
		{"mariadb", "e", ok, LayoutRecords, ""},
		{"redis-cluster", "a", ok, LayoutValue, ""},
		{"memory", "a", ok, LayoutValue, ""},
		{"memcached", "c", ok, LayoutValue, ""},
		{"memcached", "e", ok, "", "store memcached: ycsb e: scans (scanproportion 0.95) need a store that scans in key order, and this one keeps each record as one value"},
		{"files", "e", ok, "", "store files: ycsb e: scans"},
		{"postgres", "a", workload.Load{Clients: 1, Ops: 10, ConnectPerOp: true}, "", "store postgres: ycsb a: --connect-per-op is not supported on a store's own records"},
	} {
		p, err := Params{Workload: c.ycsb, Load: c.load}.ForKind(kind(c.kind))
		switch {
		case c.refused != "" && (err == nil || !strings.HasPrefix(err.Error(), c.refused) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %s: %v, want one line starting %q", c.kind, c.ycsb, err, c.refused)
		case c.refused == "" && (err != nil || p.Layout != c.layout):
			t.Errorf("%s %s: layout %q, %v; want %s", c.kind, c.ycsb, p.Layout, err, c.layout)
		}
	}
}

// benchOps runs workload name's ops on st after loading its records, one
// worker, and reports the allocations per op of the record path (the
// worker's and the store's).
func benchOps(b *testing.B, st store.Store, name string) {
	p := Params{Workload: name, Records: 1000, Seed: 1, Load: workload.Load{Clients: 1, Ops: 1}}.WithDefaults()
	p.Layout = LayoutOf(st)
	props, err := p.Props()
	if err != nil {
		b.Fatal(err)
	}
	core, err := gen.NewCore(props)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Reset(ctx); err != nil {
		b.Fatal(err)
	}
	conns, _, _, closeAll, err := openRecords(ctx, st, core, p.Load)
	if err != nil {
		b.Fatal(err)
	}
	defer closeAll()
	l := &loader{w: newWorker(conns[0], core, p.Seed, loadStreams, nil)}
	for range p.Records {
		if err := l.Do(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
	var kindOf [gen.NumOps]int
	w := newWorker(conns[0], core, p.Seed, runStreams, &kindOf)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Do(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOps: A (reads and updates) and F (read-modify-writes) on a
// record kept as one value (memory) and as the store's own (PostgreSQL's
// rows, Redis's hashes); E's scans on PostgreSQL.
func BenchmarkOps(b *testing.B) {
	for _, kind := range []string{"memory", "postgres", "redis"} {
		st := openers[kind](b)
		for _, name := range []string{"a", "f", "e"} {
			if name == "e" && LayoutOf(st) != LayoutRecords {
				continue
			}
			b.Run(kind+"/"+name, func(b *testing.B) { benchOps(b, st, name) })
		}
	}
}
