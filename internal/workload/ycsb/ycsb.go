// Package ycsb runs YCSB's core workloads A to F (CoreWorkload, ported in
// package gen) on every key-value store: a load phase inserts the records,
// then the run phase draws YCSB's operations with its distributions, and
// the engine records each kind of operation apart (Phase.ByOp: read,
// update, insert, rmw), as YCSB reports them.
//
// A record is one value holding its fields (record.go), on every store.
// Deviations from YCSB, said in docs/workloads.md:
//
//   - An update writes the whole record, every field drawn afresh, in one
//     Set without reading it (YCSB's update of one field, writeallfields
//     false, writes that field only): a store keeping the record as one
//     value cannot rewrite one field without reading the others.
//   - A read reads the whole record also when readallfields is false (the
//     field is drawn, and checked to be there).
//   - A read-modify-write (F) reads the record, draws the field (or, with
//     writeallfields, all of them) afresh in it and writes the record back:
//     one op, timed from the read to the write's reply, as YCSB times it.
//   - Scans (E) need a store that scans in key order, which no store here
//     offers yet: a workload with scans is refused before any work.
//   - Values are random printable bytes; a read checks that the record
//     decodes into its fields (names and lengths), not the bytes, as YCSB
//     does without dataintegrity (which is refused).
package ycsb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/ycsb/gen"
)

// Defaults, YCSB's: its core workload files set recordcount and
// operationcount to 1000, and its client runs one thread.
const (
	DefaultRecords = 1000
	DefaultOps     = 1000
	DefaultClients = 1
)

// Phase and op kind names: YCSB's operations, lower case.
const (
	PhaseLoad = "load"
	PhaseRun  = "run"
	OpRead    = "read"
	OpUpdate  = "update"
	OpInsert  = "insert"
	OpScan    = "scan"
	OpRMW     = "rmw"
)

// opNames are the kinds' names by gen.Op.
var opNames = [gen.NumOps]string{gen.Read: OpRead, gen.Update: OpUpdate, gen.Insert: OpInsert, gen.Scan: OpScan, gen.ReadModifyWrite: OpRMW}

// Params are one ycsb cell's parameters: a core workload, its records and
// the properties laid over its file.
type Params struct {
	// Workload is the core workload: a to f.
	Workload string `json:"ycsb"`
	// Records is recordcount: the records the load phase inserts.
	Records int64 `json:"records"`
	// Properties are YCSB property keys set over the workload's file, as
	// -P files and -p key=value set them (recordcount and operationcount
	// give Records and the load's ops where those are not given).
	Properties map[string]string `json:"properties,omitempty"`
	Seed       uint64            `json:"seed"`
	// Load: Clients default 1; Ops default 1000 when neither Ops nor
	// Duration is given. Pipeline is not supported.
	Load workload.Load `json:"load"`
}

// WithDefaults returns p with every zero field set to its default: Records
// from the properties' recordcount, else 1000; counted ops, when neither
// ops nor a duration is given, from operationcount, else 1000. Records and
// the load's ops, when given, beat the properties, as YCSB's -p beats its
// -P files.
func (p Params) WithDefaults() Params {
	if p.Records == 0 {
		p.Records = countProperty(p.Properties, "recordcount", DefaultRecords)
	}
	p.Load = p.Load.WithDefaults(DefaultClients, countProperty(p.Properties, "operationcount", DefaultOps))
	return p
}

// countProperty is property key of props as a count, or def when it is
// unset or not a positive count (Props refuses a value that is not).
func countProperty(props map[string]string, key string, def int64) int64 {
	if n, err := strconv.ParseInt(props[key], 10, 64); err == nil && n > 0 {
		return n
	}
	return def
}

// Props are the cell's YCSB properties: the core workload's file, the
// properties set over it, then recordcount from Records and operationcount
// from the load's ops (with a duration, the properties': it only widens a
// zipfian's range by the inserts expected). They are validated, and what
// this port cannot run is refused.
func (p Params) Props() (gen.Properties, error) {
	p = p.WithDefaults()
	if !slices.Contains(gen.StandardNames(), p.Workload) {
		return gen.Properties{}, fmt.Errorf("unknown core workload %q (valid: %s)", p.Workload, strings.Join(gen.StandardNames(), ", "))
	}
	props, err := gen.Standard(p.Workload)
	if err != nil {
		return props, err
	}
	for _, k := range slices.Sorted(maps.Keys(p.Properties)) {
		if err := props.Set(k, p.Properties[k]); err != nil {
			return props, fmt.Errorf("properties: %v", err)
		}
	}
	for _, k := range []string{"recordcount", "operationcount"} {
		if v, ok := p.Properties[k]; ok && countProperty(p.Properties, k, 0) == 0 {
			return props, fmt.Errorf("property %s=%q: want a positive count", k, v)
		}
	}
	props.RecordCount = p.Records
	if p.Load.Ops > 0 {
		props.OperationCount = p.Load.Ops
	}
	if err := props.Validate(); err != nil {
		return props, err
	}
	if props.ScanProportion > 0 {
		return props, fmt.Errorf("scans (scanproportion %v) need a store that can scan in key order, and no store's scan is built yet", props.ScanProportion)
	}
	if props.DataIntegrity {
		return props, errors.New("dataintegrity=true is not supported: values are random, and a read checks the record's fields, not their bytes")
	}
	return props, nil
}

// Validate rejects what cannot run (after defaults), before any work.
func (p Params) Validate() error {
	p = p.WithDefaults()
	var errs []error
	if err := workload.CheckKeys("records", p.Records); err != nil {
		errs = append(errs, err)
	}
	if _, err := p.Props(); err != nil {
		errs = append(errs, err)
	}
	if p.Load.Pipeline > 1 {
		errs = append(errs, fmt.Errorf("--pipeline is not supported (got %d): YCSB's client sends one operation at a time", p.Load.Pipeline))
	}
	errs = append(errs, p.Load.Validate())
	return workload.Refuse("ycsb "+p.Workload, errs...)
}

// recordBytes is the largest record of props: each field's name and value
// with their length prefixes.
func recordBytes(props gen.Properties) int64 {
	name := int64(len(props.FieldNamePrefix)) + 5 // up to 10000 fields
	return props.FieldCount * (name + props.FieldLength + 2*binaryMaxVarint)
}

const binaryMaxVarint = 10

// Memory estimates a cell's memory: per client a key and three records
// (built, read, rewritten) with a recorder per kind; the records, and the
// inserts the run expects, as the data set.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	props, err := p.Props()
	if err != nil {
		return workload.Estimate{} // Validate refuses it first
	}
	rec := recordBytes(props)
	data := props.Inserts() + int64(float64(p.Load.Ops)*props.InsertProportion)
	return workload.Estimate{
		Clients:   p.Load.Clients,
		PerClient: workload.ClientBytes(gen.NumOps, workload.KeyBytes+3*rec),
		Data:      data * workload.EntryBytes(int(rec)),
	}
}

// Run empties the store, inserts the records (phase load), then runs the
// workload's operations (phase run). It returns the phases measured so far
// also when it fails.
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.WithDefaults()
	props, err := p.Props()
	if err != nil {
		return nil, err
	}
	core, err := gen.NewCore(props)
	if err != nil {
		return nil, fmt.Errorf("ycsb: %w", err)
	}
	clients, closeAll, err := workload.KVClients(ctx, st, p.Load)
	if err != nil {
		return nil, fmt.Errorf("ycsb: %w", err)
	}
	defer closeAll()
	if err := st.Reset(ctx); err != nil {
		return nil, fmt.Errorf("ycsb: reset store: %w", err)
	}
	loaded, err := loadRecords(ctx, clients, core, p, h)
	if err != nil {
		return []metrics.Phase{loaded}, fmt.Errorf("ycsb load phase: %w", err)
	}
	if n := sumErrors(loaded); n > 0 {
		return []metrics.Phase{loaded}, fmt.Errorf("ycsb load phase: %d of %d inserts failed (%v): the run phase would read records that are not there", n, loaded.Ops, loaded.Errors)
	}
	var settled string
	if s, ok := st.(store.Settler); ok {
		if err := s.Settle(ctx); err != nil {
			return []metrics.Phase{loaded}, fmt.Errorf("ycsb: settle before the run: %w", err)
		}
		settled = "the store was settled after the load, outside the measured time (PostgreSQL: VACUUM ANALYZE)"
	}
	ran, err := runOps(ctx, clients, core, p, h)
	if settled != "" {
		ran.Notes = append(ran.Notes, settled)
	}
	if err != nil {
		return []metrics.Phase{loaded, ran}, fmt.Errorf("ycsb run phase: %w", err)
	}
	return []metrics.Phase{loaded, ran}, nil
}

func sumErrors(ph metrics.Phase) int64 {
	var n int64
	for _, e := range ph.Errors {
		n += e
	}
	return n
}

// Streams of the workers' draws: the load's and the run's apart, so the
// run's draws do not depend on how many records were loaded.
const (
	loadStreams = 0
	runStreams  = 1 << 62
)

// loadRecords inserts the records, one Set each, spread over the clients.
func loadRecords(ctx context.Context, clients []store.KV, core *gen.Core, p Params, h workload.Hooks) (metrics.Phase, error) {
	props := core.Properties()
	workers := make([]load.Worker, len(clients))
	for i, c := range clients {
		workers[i] = &loader{w: newWorker(c, core, p.Seed, loadStreams+uint64(i), nil)}
	}
	return load.Run(ctx, h.Apply(load.Config{Name: PhaseLoad, Workers: len(clients), Ops: props.Inserts(), ClientIO: workload.ClientIO(clients)}), workers)
}

// runOps runs the workload's operations under the load.
func runOps(ctx context.Context, clients []store.KV, core *gen.Core, p Params, h workload.Hooks) (metrics.Phase, error) {
	props := core.Properties()
	// Only the operations the workload draws are kinds, so C records reads
	// alone.
	var kinds []string
	var kindOf [gen.NumOps]int
	for op := range gen.Op(gen.NumOps) {
		if props.Proportion(op) > 0 {
			kindOf[op] = len(kinds)
			kinds = append(kinds, opNames[op])
		}
	}
	workers := make([]load.Worker, len(clients))
	for i, c := range clients {
		workers[i] = newWorker(c, core, p.Seed, runStreams+uint64(i), &kindOf)
	}
	cfg := p.Load.Config(PhaseRun)
	cfg.Kinds = kinds
	cfg.ClientIO = workload.ClientIO(clients)
	return load.Run(ctx, h.Apply(cfg), workers)
}

// worker is one client's operations. Its key and record buffers are its own
// and reused.
type worker struct {
	kv     store.KV
	core   *gen.Core
	g      gen.Worker
	props  gen.Properties
	check  checker
	kindOf *[gen.NumOps]int
	kind   int

	key, rec, got, name []byte
	// fields are the read record's fields' bounds, for a rewrite of one.
	fields [][2]int
}

func newWorker(kv store.KV, core *gen.Core, seed, stream uint64, kindOf *[gen.NumOps]int) *worker {
	props := core.Properties()
	rec := recordBytes(props)
	return &worker{
		kv: kv, core: core, g: core.Worker(seed, stream), props: props, check: newChecker(core), kindOf: kindOf,
		key: make([]byte, 0, 32), rec: make([]byte, 0, rec), got: make([]byte, 0, rec), name: make([]byte, 0, 32),
		fields: make([][2]int, props.FieldCount),
	}
}

// Kind is the kind of the last op, an index into the phase's kinds.
func (w *worker) Kind() int { return w.kind }

// record builds a record of fresh values in w.rec.
func (w *worker) record() {
	w.rec = w.rec[:0]
	for i := range w.props.FieldCount {
		w.name = w.core.AppendFieldName(w.name[:0], i)
		w.rec = appendBytes(w.rec, w.name)
		w.rec = appendFresh(w.rec, w.g.Rand(), w.g.NextFieldLength())
	}
}

func (w *worker) Do(ctx context.Context, _ int64) error {
	op := w.g.NextOp()
	w.kind = w.kindOf[op]
	switch op {
	case gen.Read:
		return w.read(ctx)
	case gen.Update:
		return w.update(ctx)
	case gen.Insert:
		return w.insert(ctx)
	case gen.ReadModifyWrite:
		return w.readModifyWrite(ctx)
	}
	return fmt.Errorf("ycsb: operation %v is not built (refused before the run)", op)
}

// get reads key w.key's record into w.got and checks it; bounds, when not
// nil, receives its fields' bounds.
func (w *worker) get(ctx context.Context, bounds [][2]int) error {
	got, ok, err := w.kv.Get(ctx, w.key, w.got[:0])
	w.got = got
	if err != nil {
		return err
	}
	if !ok {
		return workload.Missing(w.key)
	}
	return w.check.check(w.key, got, bounds)
}

func (w *worker) read(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	if !w.props.ReadAllFields {
		w.g.NextField() // YCSB reads one field; the record is one value, read whole
	}
	return w.get(ctx, nil)
}

func (w *worker) update(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	if !w.props.WriteAllFields {
		w.g.NextField() // YCSB writes one field; here the record is rewritten whole
	}
	w.record()
	return w.kv.Set(ctx, w.key, w.rec, 0)
}

func (w *worker) insert(ctx context.Context) error {
	k := w.g.NextInsertKeynum()
	w.key = w.core.AppendKey(w.key[:0], k)
	w.record()
	err := w.kv.Set(ctx, w.key, w.rec, 0)
	// Acknowledged also when it failed, as CoreWorkload does (finally).
	if ackErr := w.g.Acknowledge(k); ackErr != nil {
		return errors.Join(err, fmt.Errorf("ycsb: %w", ackErr))
	}
	return err
}

// readModifyWrite reads the record, draws one field afresh in it (every
// field with writeallfields) and writes it back.
func (w *worker) readModifyWrite(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	if !w.props.ReadAllFields {
		w.g.NextField()
	}
	if err := w.get(ctx, w.fields); err != nil {
		return err
	}
	if w.props.WriteAllFields {
		w.record()
		return w.kv.Set(ctx, w.key, w.rec, 0)
	}
	i := w.g.NextField()
	f := w.fields[i]
	w.name = w.core.AppendFieldName(w.name[:0], i)
	w.rec = append(w.rec[:0], w.got[:f[0]]...)
	w.rec = appendBytes(w.rec, w.name)
	w.rec = appendFresh(w.rec, w.g.Rand(), w.g.NextFieldLength())
	w.rec = append(w.rec, w.got[f[1]:]...)
	return w.kv.Set(ctx, w.key, w.rec, 0)
}

// loader is a load-phase worker: each op inserts the next record of the
// load's key sequence.
type loader struct{ w *worker }

func (l *loader) Do(ctx context.Context, _ int64) error {
	k, ok := l.w.g.NextLoadKeynum()
	if !ok {
		return errors.New("ycsb: the load's records are all inserted (more load ops than records)")
	}
	w := l.w
	w.key = w.core.AppendKey(w.key[:0], k)
	w.record()
	return w.kv.Set(ctx, w.key, w.rec, 0)
}
