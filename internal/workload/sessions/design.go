package sessions

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/store"
)

// Design is a parsed design: a preset and the knobs changed from it. The
// knob values that are not the store's (V9 reap, V10 keepalive, V11
// skip-if-fresh) decide what the workload does; the rest go to the store as
// a store.SessionDesign.
type Design struct {
	// Spec is the design as written, e.g. "tuned,fillfactor=100".
	Spec string
	// Knobs are the values of every knob, by name (see Knobs).
	Knobs map[string]string
}

// Knob is one switch of a design.
type Knob struct {
	V      string   // the spec's number, e.g. "V12"
	Name   string   // the key in a design spec
	Naive  string   // its value in the naive preset
	Tuned  string   // its value in the tuned preset
	Values []string // the accepted values; nil: a positive integer
	Doc    string
}

// Knobs lists every knob in the spec's order. Each switches on its own:
// "naive,persistence=logged" is the naive design with only V1 changed.
var Knobs = []Knob{
	{"V1", "persistence", "unlogged", "logged", []string{"unlogged", "logged"}, "CREATE UNLOGGED TABLE or a logged one"},
	{"V2", "id", "int", "bigint", []string{"int", "bigint"}, "id column type"},
	{"V3", "id_cache", "1", "100", nil, "identity CACHE"},
	{"V4", "payload", "jsonb", "text", []string{"jsonb", "text", "json", "bytea"}, "payload column type"},
	{"V5", "expires", "timestamptz", "timestamp", []string{"timestamptz", "timestamp"}, "expires_at type (timestamp is compared with LOCALTIMESTAMP)"},
	{"V6", "commit", "sync", "async", []string{"sync", "async"}, "synchronous_commit=off for each write transaction"},
	{"V6", "tx_form", "statements", "statements", []string{"statements", "string", "pipeline"}, "how an async INSERT sends BEGIN; SET LOCAL; INSERT; COMMIT"},
	{"V7", "call", "insert", "function", []string{"insert", "function"}, "create with INSERT or SELECT new_session($1)"},
	{"V8", "expires_index", "on", "off", []string{"on", "off"}, "an index on expires_at"},
	{"V9", "reap", "unbounded", "batched", []string{"unbounded", "batched"}, "one DELETE of every expired row, or capped batches"},
	{"V10", "keepalive", "per-read", "batched", []string{"per-read", "batched"}, "UPDATE … RETURNING on every read, or SELECT + batched UPDATE … = ANY(array)"},
	{"V11", "skip_fresh", "off", "on", []string{"off", "on"}, "keepalive only sessions with less than refresh_below left"},
	{"V12", "fillfactor", "100", "70", nil, "table fillfactor"},
	{"V13", "autovacuum", "default", "tuned", []string{"default", "tuned"}, "table autovacuum: threshold 2000, scale 0.01, cost_delay 2"},
	{"V14", "autovacuum_max_workers", "3", "6", nil, "server autovacuum_max_workers (needs a restart)"},
	{"V15", "constraints", "off", "off", []string{"off", "on"}, "NOT NULL and varchar(256)"},
	{"", "fsync", "default", "default", []string{"default", "none", "file", "dir"}, "files store: fsync of a create"},
}

// Presets are the designs a spec starts from.
var Presets = []string{"naive", "tuned"}

// ParseDesign reads "preset[,knob=value]...".
func ParseDesign(spec string) (Design, error) {
	parts := strings.Split(strings.TrimSpace(spec), ",")
	preset := strings.TrimSpace(parts[0])
	d := Design{Spec: strings.TrimSpace(spec), Knobs: map[string]string{}}
	switch preset {
	case "naive", "tuned":
	default:
		return Design{}, fmt.Errorf("design %q: start with a preset (%s), then ,knob=value", spec, strings.Join(Presets, " or "))
	}
	for _, k := range Knobs {
		d.Knobs[k.Name] = k.Naive
		if preset == "tuned" {
			d.Knobs[k.Name] = k.Tuned
		}
	}
	for _, p := range parts[1:] {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		k, known := knob(name)
		switch {
		case !ok:
			return Design{}, fmt.Errorf("design %q: %q is not knob=value", spec, p)
		case !known:
			return Design{}, fmt.Errorf("design %q: unknown knob %q (knobs: %s)", spec, name, strings.Join(knobNames(), ", "))
		case k.Values == nil:
			if n, err := strconv.Atoi(value); err != nil || n < 1 {
				return Design{}, fmt.Errorf("design %q: %s=%q: want a positive integer", spec, name, value)
			}
		case !slices.Contains(k.Values, value):
			return Design{}, fmt.Errorf("design %q: %s=%q: want %s", spec, name, value, strings.Join(k.Values, ", "))
		}
		d.Knobs[name] = value
	}
	if ff, _ := strconv.Atoi(d.Knobs["fillfactor"]); ff < 10 || ff > 100 {
		return Design{}, fmt.Errorf("design %q: fillfactor %d: want 10-100", spec, ff)
	}
	return d, nil
}

func knob(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

func knobNames() []string {
	var n []string
	for _, k := range Knobs {
		n = append(n, k.Name)
	}
	sort.Strings(n)
	return n
}

// KeepaliveOnRead is V10: every read extends its session.
func (d Design) KeepaliveOnRead() bool { return d.Knobs["keepalive"] == "per-read" }

// SkipFresh is V11.
func (d Design) SkipFresh() bool { return d.Knobs["skip_fresh"] == "on" }

// ReapBatched is V9: capped batches rather than one unbounded DELETE.
func (d Design) ReapBatched() bool { return d.Knobs["reap"] == "batched" }

// Store is the design as the store sees it, with timings already scaled.
func (d Design) Store(t schema.Timing) store.SessionDesign {
	atoi := func(k string) int { n, _ := strconv.Atoi(d.Knobs[k]); return n }
	sd := store.SessionDesign{
		TTL:                  t.TTL,
		KeepaliveOnRead:      d.KeepaliveOnRead(),
		Unlogged:             d.Knobs["persistence"] == "unlogged",
		IDType:               d.Knobs["id"],
		IDCache:              atoi("id_cache"),
		PayloadType:          d.Knobs["payload"],
		ExpiresType:          d.Knobs["expires"],
		AsyncCommit:          d.Knobs["commit"] == "async",
		TxForm:               d.Knobs["tx_form"],
		Function:             d.Knobs["call"] == "function",
		ExpiresIndex:         d.Knobs["expires_index"] == "on",
		Fillfactor:           atoi("fillfactor"),
		TableAutovacuum:      d.Knobs["autovacuum"] == "tuned",
		AutovacuumMaxWorkers: atoi("autovacuum_max_workers"),
		Constraints:          d.Knobs["constraints"] == "on",
		TimeScale:            t.Scale,
	}
	if d.SkipFresh() {
		sd.RefreshBelow = t.RefreshBelow
	}
	if f := d.Knobs["fsync"]; f != "default" {
		sd.FileSync = f
	}
	return sd
}

// Variants are phase A's ways of inserting, the article's four and the
// spec's controls.
var Variants = []string{"unlogged", "logged", "tx", "function", "tx-string", "function-sync"}

// VariantDoc says what each variant sends.
var VariantDoc = map[string]string{
	"unlogged":      "UNLOGGED table, INSERT, synchronous commit",
	"logged":        "logged table, INSERT, synchronous commit",
	"tx":            "logged, BEGIN; SET LOCAL synchronous_commit = off; INSERT; COMMIT (4 round trips)",
	"function":      "logged, SELECT new_session($1), which calls set_config('synchronous_commit', 'off', true)",
	"tx-string":     "control: the tx variant as one multi-statement string (1 round trip)",
	"function-sync": "control: new_session($1) without set_config (synchronous commit)",
}

// VariantDesign is phase A's table for a variant: the article's second
// table, corrected (BIGINT identity with CACHE 100, TEXT, TIMESTAMP), logged
// or not, with the variant's commit and call form.
func VariantDesign(v string) (Design, error) {
	d, err := ParseDesign("tuned")
	if err != nil {
		return Design{}, err
	}
	d.Spec = "variant " + v
	// Only what the variant changes: no index, default storage options.
	d.Knobs["fillfactor"], d.Knobs["autovacuum"], d.Knobs["autovacuum_max_workers"] = "100", "default", "0"
	switch v {
	case "unlogged":
		d.Knobs["persistence"], d.Knobs["commit"], d.Knobs["call"] = "unlogged", "sync", "insert"
	case "logged":
		d.Knobs["commit"], d.Knobs["call"] = "sync", "insert"
	case "tx":
		d.Knobs["commit"], d.Knobs["call"], d.Knobs["tx_form"] = "async", "insert", "statements"
	case "tx-string":
		d.Knobs["commit"], d.Knobs["call"], d.Knobs["tx_form"] = "async", "insert", "string"
	case "function":
		d.Knobs["commit"], d.Knobs["call"] = "async", "function"
	case "function-sync":
		d.Knobs["commit"], d.Knobs["call"] = "sync", "function"
	default:
		return Design{}, fmt.Errorf("unknown variant %q (valid: %s)", v, strings.Join(Variants, ", "))
	}
	return d, nil
}

// errNotPostgres is phase A on another store.
var errNotPostgres = errors.New("phase A (insert) reproduces the article's PostgreSQL micro-benchmark: postgres targets only")
