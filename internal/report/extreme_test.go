package report

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/result/sessions"
)

// extreme is one way a figure can be out of the ordinary: what every
// integer and every float of a result is set to.
type extreme struct {
	name string
	i    int64   // signed integers, truncated to their type's range
	u    uint64  // unsigned integers
	f    float64 // floats
}

// extremes are the values a result can carry: --rate 1e300 gave a target
// of 1e300 ops/s (MinInt64 once converted to int64 on amd64) and a max lag
// of MaxInt64 ns; NaN and ±Inf come from divisions by zero.
var extremes = []extreme{
	{"max", math.MaxInt64, math.MaxUint64, 1e300},
	{"min", math.MinInt64, 0, -1e300},
	{"maxfloat", math.MaxInt64, math.MaxUint64, math.MaxFloat64},
	{"-maxfloat", math.MinInt64, math.MaxUint64, -math.MaxFloat64},
	{"nan", -1, 1, math.NaN()},
	{"+inf", math.MaxInt64, math.MaxUint64, math.Inf(1)},
	{"-inf", math.MinInt64, 0, math.Inf(-1)},
	{"tiny", 1, 1, math.SmallestNonzeroFloat64},
	{"int64 edge", math.MaxInt64, math.MaxUint64, math.MaxInt64}, // 2^63: one past MaxInt64
	{"int64 edge-", math.MinInt64, 0, math.MinInt64},
}

// setNumbers sets every settable integer and float reachable from v (through
// structs, pointers, slices, arrays and maps, allocating one element where
// there is none) to x's values; strings and booleans stay as they are.
func setNumbers(v reflect.Value, x extreme) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := x.i
		bits := v.Type().Bits()
		if lo, hi := int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1); n < lo {
			n = lo
		} else if n > hi {
			n = hi
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(x.u & (math.MaxUint64 >> (64 - v.Type().Bits())))
	case reflect.Float32:
		v.SetFloat(float64(float32(math.Max(-math.MaxFloat32, math.Min(math.MaxFloat32, x.f)))))
	case reflect.Float64:
		v.SetFloat(x.f)
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*time.Time]() {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		setNumbers(v.Elem(), x)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setNumbers(v.Field(i), x)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := range v.Len() {
			setNumbers(v.Index(i), x)
		}
	case reflect.Array:
		for i := range v.Len() {
			setNumbers(v.Index(i), x)
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.Interface || v.Type().Elem().Kind() == reflect.Interface {
			return // params: set by hand, as JSON decodes them
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		if v.Len() == 0 {
			key := reflect.New(v.Type().Key()).Elem()
			if key.Kind() == reflect.String {
				key.SetString("get")
			} else {
				setNumbers(key, x)
			}
			v.SetMapIndex(key, reflect.New(v.Type().Elem()).Elem())
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var all []kv
		for iter.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			setNumbers(e, x)
			all = append(all, kv{iter.Key(), e})
		}
		for _, e := range all {
			v.SetMapIndex(e.k, e.v)
		}
	}
}

// extremeHistogram is a histogram holding as many values as its count can:
// what a hand-made result could hold, and ranks near MaxInt64.
func extremeHistogram(t *testing.T) string {
	t.Helper()
	h := metrics.NewHistogram()
	for _, v := range []int64{1, 1000, h.HighestTrackableValue()} {
		if err := h.RecordValues(v, math.MaxInt64/3); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

// extremeResult is a result with a cell of each kind the reports have a
// section for, every figure set to x.
func extremeResult(t *testing.T, x extreme) *result.Result {
	t.Helper()
	phase := func(name string) metrics.Phase {
		return metrics.Phase{Name: name, Histogram: extremeHistogram(t), HistogramUnit: "ns", Warnings: []string{"a warning with 12 figures"}}
	}
	phases := func(names ...string) []metrics.Phase {
		var ps []metrics.Phase
		for _, n := range names {
			ps = append(ps, phase(n))
		}
		return ps
	}
	cell := func(id, target, workload, name string, ps []metrics.Phase) result.Cell {
		return result.Cell{ID: id, Target: target, Workload: workload, Name: name, Status: result.CellOK, Phases: ps,
			Params: map[string]any{"keys": x.f, "batch": x.f, "clients": x.f, "rate": x.f, "rtt_ms": x.f, "stall_after": "1s", "stall_for": "500ms"}}
	}
	r := &result.Result{Schema: result.Schema, ID: "extreme-" + x.name, Status: result.StatusComplete, Suite: "cache-vs-db",
		Command: []string{"storebench", "run", "kv", "--rate", "1e300"},
		Targets: []result.Target{{Name: "redis", Store: "redis", Managed: true}, {Name: "postgres", Store: "postgres"}},
		Cells: []result.Cell{
			cell("memory/kv/keys=1", "memory", "kv", "", phases("write", "read")),
			cell("redis/kv-batch/keys=1", "redis", "kv", "kv-batch", phases("write", "read")),
			cell("redis/throughput", "redis", "throughput", "", phases("set", "get")),
			cell("redis/hotkey", "redis", "hotkey", "open-loop-stall", phases("get")),
			cell("redis/mix", "redis", "mix", "", phases("mix")),
			cell("postgres/sessions/insert", "postgres", "sessions", "", phases("insert")),
			cell("postgres/sessions/churn", "postgres", "sessions", "", phases("create", "read", "keepalive", "reap")),
			cell("postgres/payments", "postgres", "payments", "", phases("transfer")),
			cell("sqlite/durability", "sqlite", "durability", "", phases("write")),
			{ID: "redis/failed", Target: "redis", Workload: "kv", Status: result.CellFailed, Error: "boom"},
		},
		Article: &result.Article{Title: "an article", Tables: []result.ArticleTable{
			{Title: "write", Metric: "total_ms", Unit: "ms", Workload: "kv", Phase: "write", Param: "keys", Columns: []string{"1", "1e300"},
				Rows: []result.ArticleRow{{Label: "Redis", Target: "memory"}}},
			{Title: "ops", Metric: "ops_s", Unit: "ops/s", Workload: "throughput", Phase: "get",
				Columns: []string{"x"}, Rows: []result.ArticleRow{{Label: "Redis", Target: "redis"}}},
		}},
		Skipped: []result.Skipped{{Target: "mariadb", Reason: "not installed"}},
	}
	r.Cells[5].Sessions = &sessions.Summary{Phase: sessions.PhaseInsert, Store: "postgres"}
	r.Cells[6].Sessions = &sessions.Summary{Phase: "churn", Store: "postgres"}
	r.Cells[7].Payments = &payments.Summary{}
	r.Cells[8].Durability = &durability.Summary{}
	setNumbers(reflect.ValueOf(r).Elem(), x)
	r.Repeat = 0 // a run's shape, not a figure: cells below carry no round
	for i := range r.Cells {
		r.Cells[i].Repeat = 0
	}
	return r
}

// render runs one writer, turning a panic into an error and a writer that
// never returns (a loop over 2^63 ticks) into a failure.
func render(t *testing.T, name string, write func(*bytes.Buffer) error) string {
	t.Helper()
	type out struct {
		s   string
		err error
	}
	done := make(chan out, 1)
	go func() {
		var b bytes.Buffer
		defer func() {
			if p := recover(); p != nil {
				done <- out{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		err := write(&b)
		done <- out{b.String(), err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Errorf("%s: %v", name, o.err)
		}
		return o.s
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not finish in 30 s", name)
	}
	return ""
}

// garbage is how a figure must never be shown to a reader: Go's NaN or
// Inf, or a run of digits longer than any uint64 (a float printed in full).
var garbage = regexp.MustCompile(`\bNaN\b|[+-]?Inf\b|[0-9]{21,}`)

// TestExtremeFigures: a result whose every integer and float is extreme
// (MinInt64, MaxInt64, 1e300, NaN, ±Inf, …) renders in every format and
// through compare without a crash, a panic or a hang; what a reader sees
// shows such figures as "—" or in exponent form, and never a positive one
// as the negative MinInt64.
func TestExtremeFigures(t *testing.T) {
	for i, x := range extremes {
		t.Run(x.name, func(t *testing.T) {
			r := extremeResult(t, x)
			other := extremeResult(t, extremes[(i+1)%len(extremes)])
			runs := []CompareRun{{Name: "A", Path: "a.json", R: r}, {Name: "B", Path: "b.json", R: other}}
			outs := map[string]string{
				"text":     render(t, "text", func(b *bytes.Buffer) error { Text(b, r); return nil }),
				"markdown": render(t, "markdown", func(b *bytes.Buffer) error { return Markdown(b, r) }),
				"html":     render(t, "html", func(b *bytes.Buffer) error { return HTML(b, r) }),
				"csv":      render(t, "csv", func(b *bytes.Buffer) error { return CSV(b, r) }),
				"compare text": render(t, "compare text", func(b *bytes.Buffer) error {
					CompareText(b, runs, Compare(runs))
					return nil
				}),
				"compare markdown": render(t, "compare markdown", func(b *bytes.Buffer) error {
					CompareMarkdown(b, runs, Compare(runs))
					return nil
				}),
			}
			doc, err := html.Parse(strings.NewReader(outs["html"]))
			if err != nil {
				t.Fatal(err)
			}
			shown := map[string]string{"html": textLines(doc)}
			for _, name := range []string{"text", "markdown", "compare text", "compare markdown"} {
				shown[name] = outs[name]
			}
			for name, s := range shown {
				for _, line := range strings.Split(s, "\n") {
					if strings.Contains(line, " committed transfers/s") {
						continue // payments.Summary.Headline: formatted by its package
					}
					if bad := garbage.FindString(line); bad != "" {
						t.Errorf("%s shows %.40q in: %.200s", name, bad, line)
						break
					}
				}
			}
			for name, s := range outs {
				if s == "" {
					t.Errorf("%s: no output", name)
				}
				// thousands(MinInt64) once printed "-9,223,…" for 1e300;
				// a positive figure must never print negative.
				if x.f > 0 && strings.Contains(s, "-9,223,372,036,854,775,808") {
					t.Errorf("%s prints MinInt64 for a positive figure", name)
				}
			}
		})
	}
}

// textLines is the text a browser shows, a line per text node.
func textLines(n *html.Node) string {
	var b strings.Builder
	for _, t := range findAll(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data + "\n")
	}
	return b.String()
}
