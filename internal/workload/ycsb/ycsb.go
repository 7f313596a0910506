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
	"github.com/storebench/storebench/internal/store/blockio"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
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
	// Layout is how the target's store keeps the records: LayoutRecords
	// (its own, store.Records) or LayoutValue; set by the plan from the
	// store's kind, and by Run from the store when empty.
	Layout string `json:"layout,omitempty"`
}

// ForKind is p on a target of kind k: the layout its stores keep records
// in, checked (scans need a store of its own records), before any work.
func (p Params) ForKind(k target.Kind) (Params, error) {
	p.Layout = LayoutValue
	if workload.Supports[store.Records](k) {
		p.Layout = LayoutRecords
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("store %s: %w", k.Name, err)
	}
	return p, nil
}

// LayoutOf is the layout a store keeps records in: its own where it is
// store.Records.
func LayoutOf(st store.Store) string {
	if _, ok := st.(store.Records); ok {
		return LayoutRecords
	}
	return LayoutValue
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
	errs = append(errs, p.checkLayout())
	errs = append(errs, p.Load.Validate())
	return workload.Refuse("ycsb "+p.Workload, errs...)
}

// checkLayout refuses what the store's layout cannot run: scans where a
// record is one value (no order to scan in), a connection per op on a
// store's own records (a worker's connection is prepared for them). An
// empty layout (the entry, before a target) is not checked.
func (p Params) checkLayout() error {
	props, err := p.Props()
	if err != nil {
		return nil // Validate says why
	}
	switch {
	case p.Layout == LayoutValue && props.ScanProportion > 0:
		return fmt.Errorf("scans (scanproportion %v) need a store that scans in key order, and this one keeps each record as one value", props.ScanProportion)
	case p.Layout == LayoutRecords && p.Load.ConnectPerOp:
		return errors.New("--connect-per-op is not supported on a store's own records: a worker's connection prepares their statements")
	case p.Layout != "" && p.Layout != LayoutRecords && p.Layout != LayoutValue:
		return fmt.Errorf("unknown layout %q (have %s, %s)", p.Layout, LayoutRecords, LayoutValue)
	}
	return nil
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
// workload's operations (phase run). The records are the store's own where
// it is store.Records, else one value each (Params.Layout); both phases
// say which in their notes. It returns the phases measured so far also
// when it fails.
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	layout := LayoutOf(st)
	if p.Layout != "" && p.Layout != layout {
		return nil, fmt.Errorf("ycsb: planned for layout %s, but the store's is %s", p.Layout, layout)
	}
	p.Layout = layout
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
	if err := st.Reset(ctx); err != nil {
		return nil, fmt.Errorf("ycsb: reset store: %w", err)
	}
	conns, clientIO, note, closeAll, err := openRecords(ctx, st, core, p.Load)
	if err != nil {
		return nil, fmt.Errorf("ycsb: %w", err)
	}
	defer closeAll()
	note = "records: " + note
	loaded, err := loadRecords(ctx, conns, clientIO, core, p, h)
	loaded.Notes = append(loaded.Notes, note)
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
	ran, err := runOps(ctx, conns, clientIO, core, p, h)
	ran.Notes = append(ran.Notes, note)
	if settled != "" {
		ran.Notes = append(ran.Notes, settled)
	}
	if err != nil {
		return []metrics.Phase{loaded, ran}, fmt.Errorf("ycsb run phase: %w", err)
	}
	return []metrics.Phase{loaded, ran}, nil
}

// openRecords sets up the store's records and opens a connection per
// client to them: the store's own where it is store.Records, else its KV
// clients each keeping a record as one value. It returns how the clients
// wait for replies, the layout in words and what closes the connections.
func openRecords(ctx context.Context, st store.Store, core *gen.Core, l workload.Load) (conns []store.RecordsConn, clientIO, layout string, closeAll func(), err error) {
	props := core.Properties()
	names := make([][]byte, props.FieldCount)
	for i := range names {
		names[i] = core.AppendFieldName(nil, int64(i))
	}
	rs, ok := st.(store.Records)
	if !ok {
		clients, closeKV, err := workload.KVClients(ctx, st, l)
		if err != nil {
			return nil, "", "", nil, err
		}
		for _, c := range clients {
			conns = append(conns, newValueRecords(c, names, recordBytes(props)))
		}
		return conns, workload.ClientIO(clients), valueLayout, closeKV, nil
	}
	fields := make([]string, len(names))
	for i, n := range names {
		fields[i] = string(n)
	}
	if layout, err = rs.RecordsSetup(ctx, fields); err != nil {
		return nil, "", "", nil, fmt.Errorf("records setup: %w", err)
	}
	closeAll = func() {
		for _, c := range conns {
			_ = c.Close() // the run's outcome is decided; a close error changes nothing
		}
	}
	ctx = blockio.WithConnections(ctx, l.Clients)
	for range l.Clients {
		c, err := rs.RecordsOpen(ctx)
		if err != nil {
			closeAll()
			return nil, "", "", nil, fmt.Errorf("open records: %w", err)
		}
		conns = append(conns, c)
	}
	return conns, workload.ClientIO(conns), layout, closeAll, nil
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

// loadRecords inserts the records, one insert each, spread over the
// clients.
func loadRecords(ctx context.Context, conns []store.RecordsConn, clientIO string, core *gen.Core, p Params, h workload.Hooks) (metrics.Phase, error) {
	props := core.Properties()
	workers := make([]load.Worker, len(conns))
	for i, c := range conns {
		workers[i] = &loader{w: newWorker(c, core, p.Seed, loadStreams+uint64(i), nil)}
	}
	return load.Run(ctx, h.Apply(load.Config{Name: PhaseLoad, Workers: len(conns), Ops: props.Inserts(), ClientIO: clientIO, MultiCall: p.Layout == LayoutRecords}), workers)
}

// runOps runs the workload's operations under the load.
func runOps(ctx context.Context, conns []store.RecordsConn, clientIO string, core *gen.Core, p Params, h workload.Hooks) (metrics.Phase, error) {
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
	workers := make([]load.Worker, len(conns))
	for i, c := range conns {
		workers[i] = newWorker(c, core, p.Seed, runStreams+uint64(i), &kindOf)
	}
	cfg := p.Load.Config(PhaseRun)
	cfg.Kinds = kinds
	cfg.ClientIO = clientIO
	// A store's own records may take several calls an op (Redis: HSET
	// and ZADD, a scan's HGETALLs).
	cfg.MultiCall = p.Layout == LayoutRecords
	return load.Run(ctx, h.Apply(cfg), workers)
}

// worker is one client's operations. Its key and field buffers are its
// own and reused.
type worker struct {
	conn   store.RecordsConn
	core   *gen.Core
	g      gen.Worker
	props  gen.Properties
	check  checker
	kindOf *[gen.NumOps]int
	kind   int
	// whole: the store rewrites the whole record on an update of one
	// field (LayoutValue), so vals must hold a record's every field.
	whole bool

	key []byte
	// vals are the fields written, got those read.
	vals, got [][]byte
	// scanned checks each record a scan reads (w.checkScanned, bound once
	// so that a scan allocates no closure).
	scanned func(key []byte, vals [][]byte) error
}

func newWorker(conn store.RecordsConn, core *gen.Core, seed, stream uint64, kindOf *[gen.NumOps]int) *worker {
	props := core.Properties()
	_, whole := conn.(*valueRecords)
	w := &worker{
		conn: conn, core: core, g: core.Worker(seed, stream), props: props, check: newChecker(core), kindOf: kindOf, whole: whole,
		key: make([]byte, 0, 32), vals: make([][]byte, props.FieldCount), got: make([][]byte, props.FieldCount),
	}
	for i := range w.vals {
		w.vals[i] = make([]byte, 0, props.FieldLength)
		w.got[i] = make([]byte, 0, props.FieldLength)
	}
	if whole {
		// An update of one field writes the others too: they start as a
		// record of their own, drawn from a stream apart so that the
		// workload's draws are every layout's.
		r := keydist.NewRand(seed^0x5ca1ab1e, stream)
		for i := range w.vals {
			w.vals[i] = appendFresh(w.vals[i][:0], &r, props.FieldLength)
		}
	}
	w.scanned = w.checkScanned
	return w
}

// Kind is the kind of the last op, an index into the phase's kinds.
func (w *worker) Kind() int { return w.kind }

// fresh draws field i's value afresh in w.vals.
func (w *worker) fresh(i int64) {
	w.vals[i] = appendFresh(w.vals[i][:0], w.g.Rand(), w.g.NextFieldLength())
}

// record draws every field afresh.
func (w *worker) record() {
	for i := range w.props.FieldCount {
		w.fresh(i)
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
	case gen.Scan:
		return w.scan(ctx)
	case gen.ReadModifyWrite:
		return w.readModifyWrite(ctx)
	}
	return fmt.Errorf("ycsb: operation %v is not built", op)
}

// readField is the field a read asks for: -1 (every field) with
// readallfields, else one drawn as YCSB draws it.
func (w *worker) readField() int {
	if w.props.ReadAllFields {
		return -1
	}
	return int(w.g.NextField())
}

// get reads key w.key's field (every field when field < 0) into w.got and
// checks it.
func (w *worker) get(ctx context.Context, field int) error {
	ok, err := w.conn.Read(ctx, w.key, field, w.got)
	if err != nil {
		return err
	}
	if !ok {
		return workload.Missing(w.key)
	}
	return w.check.check(w.key, w.got, field)
}

func (w *worker) read(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	return w.get(ctx, w.readField())
}

// write draws what an update writes, as YCSB does: every field with
// writeallfields, else one; it returns the field (-1: every field).
func (w *worker) write() int {
	if w.props.WriteAllFields {
		w.record()
		return -1
	}
	i := w.g.NextField()
	w.fresh(i)
	return int(i)
}

func (w *worker) update(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	return w.conn.Update(ctx, w.key, w.write(), w.vals)
}

func (w *worker) insert(ctx context.Context) error {
	k := w.g.NextInsertKeynum()
	w.key = w.core.AppendKey(w.key[:0], k)
	w.record()
	err := w.conn.Insert(ctx, w.key, w.vals)
	// Acknowledged also when it failed, as CoreWorkload does (finally).
	if ackErr := w.g.Acknowledge(k); ackErr != nil {
		return errors.Join(err, fmt.Errorf("ycsb: %w", ackErr))
	}
	return err
}

// scan reads scanlength records from a drawn key on, in the store's order,
// and checks each (every field: a scan reads them all, also when YCSB
// would ask for one).
func (w *worker) scan(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	n := w.g.NextScanLength()
	w.readField()
	_, err := w.conn.Scan(ctx, w.key, int(n), w.scanned)
	return err
}

func (w *worker) checkScanned(key []byte, vals [][]byte) error {
	return w.check.check(key, vals, -1)
}

// readModifyWrite reads the record, draws one field afresh in it (every
// field with writeallfields) and writes it back: one op, timed from the
// read to the write's reply, as YCSB times it.
func (w *worker) readModifyWrite(ctx context.Context) error {
	w.key = w.core.AppendKey(w.key[:0], w.g.NextKeynum())
	field := w.readField()
	if err := w.get(ctx, field); err != nil {
		return err
	}
	if w.whole {
		// The record is written whole: its other fields are those read.
		for i := range w.vals {
			w.vals[i] = append(w.vals[i][:0], w.got[i]...)
		}
	}
	return w.conn.Update(ctx, w.key, w.write(), w.vals)
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
	return w.conn.Insert(ctx, w.key, w.vals)
}
