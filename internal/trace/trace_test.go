package trace_test

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
)

type sample struct {
	name   string
	format trace.Format
	cfg    tracegen.Config
}

var samples = []sample{
	{"twitter", trace.Twitter, tracegen.Config{}},
	{"kvcache-v2", trace.KVCache, tracegen.Config{}},
	{"kvcache-v1", trace.KVCache, tracegen.Config{KVCacheV1: true}},
	{"redis-monitor", trace.RedisMonitor, tracegen.Config{BinaryKeys: true}},
	{"csv", trace.CSV, tracegen.Config{BinaryKeys: true}},
}

// readAll reads every request of a trace, counting as tracegen.Stats does.
func readAll(t *testing.T, r *trace.Reader) (tracegen.Stats, []trace.Request) {
	t.Helper()
	st := tracegen.Stats{Unsupported: map[string]int64{}, ByOp: map[string]int64{}}
	var reqs []trace.Request
	for {
		q, err := r.Next()
		if err == io.EOF {
			return st, reqs
		}
		if err != nil {
			t.Fatal(err)
		}
		st.Requests++
		if q.Op == trace.OpNone {
			st.Unsupported[q.Cmd]++
		} else {
			st.ByOp[q.Op.String()]++
		}
		c := *q
		c.Keys = nil
		for _, k := range q.Keys {
			c.Keys = append(c.Keys, bytes.Clone(k))
		}
		reqs = append(reqs, c)
	}
}

func TestFormatsReadWhatTheGeneratorWrote(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			var buf bytes.Buffer
			want, err := tracegen.Write(&buf, s.format, s.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r, err := trace.NewReader(bytes.NewReader(buf.Bytes()), s.name, "") // detected
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != s.format {
				t.Fatalf("detected %q, want %q", r.Format(), s.format)
			}
			got, reqs := readAll(t, r)
			if got.Requests != want.Requests || !maps.Equal(got.Unsupported, want.Unsupported) || !maps.Equal(got.ByOp, want.ByOp) {
				t.Fatalf("read %d requests, unsupported %v, ops %v; generator wrote %d, %v, %v",
					got.Requests, got.Unsupported, got.ByOp, want.Requests, want.Unsupported, want.ByOp)
			}
			if len(want.Unsupported) == 0 {
				t.Fatal("the sample has no unsupported command")
			}
			untimed := s.cfg.KVCacheV1
			prev := reqs[0].At
			ttls := 0
			for i, q := range reqs {
				if untimed != (q.At == trace.Untimed) {
					t.Fatalf("request %d at %v: untimed %v", i, q.At, untimed)
				}
				if q.At < prev {
					t.Fatalf("request %d at %v, before the previous at %v", i, q.At, prev)
				}
				prev = q.At
				if q.TTL > 0 {
					ttls++
				}
				if q.Op != trace.OpNone && len(q.Keys) == 0 {
					t.Fatalf("request %d (%s) without a key", i, q.Cmd)
				}
			}
			if ttls == 0 {
				t.Error("no request carries a TTL")
			}
			if !untimed && prev < 3*time.Second {
				t.Errorf("the trace spans %v, want about 4s", prev)
			}
		})
	}
}

// Whole-second times are spread evenly over their second: a second with n
// requests has them 1/n s apart.
func TestSecondsSpreadEvenly(t *testing.T) {
	in := "10,a,1,5,1,get,0\n10,b,1,5,1,get,0\n10,c,1,5,1,get,0\n10,d,1,5,1,get,0\n11,e,1,5,1,set,0\n"
	r, err := trace.NewReader(strings.NewReader(in), "t", trace.Twitter)
	if err != nil {
		t.Fatal(err)
	}
	_, reqs := readAll(t, r)
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, q := range reqs {
		if q.At != want[i] {
			t.Errorf("request %d at %v, want %v", i, q.At, want[i])
		}
	}
	if !r.Spread() {
		t.Error("Spread() false for a trace of whole seconds")
	}
}

func TestKVCacheOpCountExpands(t *testing.T) {
	in := "op_time,key,key_size,op,op_count,size,cache_hits,ttl\n100,k1,8,GET_LEASE,3,50,0,0\n100,k2,8,SET_LEASE,1,70,0,30\n"
	r, err := trace.NewReader(strings.NewReader(in), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	_, reqs := readAll(t, r)
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (op_count 3 + 1)", len(reqs))
	}
	for i, q := range reqs[:3] {
		if q.Op != trace.OpGet || len(q.Keys[0]) != 8 || !bytes.Equal(q.Keys[0], reqs[0].Keys[0]) {
			t.Errorf("request %d: %v key %q, want a get of the same 8-byte key", i, q.Op, q.Keys[0])
		}
	}
	if q := reqs[3]; q.Op != trace.OpSet || q.ValueSize != 70 || q.TTL != 30*time.Second || bytes.Equal(q.Keys[0], reqs[0].Keys[0]) {
		t.Errorf("last request %+v, want a set of 70 bytes, TTL 30s, another key", q)
	}
}

func TestMonitorQuotingAndMapping(t *testing.T) {
	key := []byte("k\"\\ \n\r\t\a\b\x00\xff€")
	line := func(args ...string) string {
		return "1700000000.000250 [0 10.0.0.1:5000] " + strings.Join(args, " ")
	}
	in := strings.Join([]string{
		"OK",
		line(`"SET"`, tracegen.Quote(key), `"hello"`, `"EX"`, `"10"`),
		line(`"get"`, tracegen.Quote(key)),
		line(`"PSETEX"`, `"a"`, `"1500"`, `"xyz"`),
		line(`"MGET"`, `"a"`, `"b"`, `"c"`),
		line(`"INCRBY"`, `"n"`, `"-7"`),
		line(`"EXPIRE"`, `"a"`, `"5"`),
		line(`"DEL"`, `"a"`, `"b"`),
		line(`"SELECT"`, `"1"`),
	}, "\n")
	r, err := trace.NewReader(strings.NewReader(in), "m", "")
	if err != nil {
		t.Fatal(err)
	}
	_, reqs := readAll(t, r)
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 8", len(reqs))
	}
	if q := reqs[0]; q.Op != trace.OpSet || !bytes.Equal(q.Keys[0], key) || q.ValueSize != 5 || q.TTL != 10*time.Second || q.At != 0 {
		t.Errorf("SET: %+v", q)
	}
	if q := reqs[1]; q.Op != trace.OpGet || !bytes.Equal(q.Keys[0], key) || q.Client != reqs[0].Client {
		t.Errorf("GET: %+v", q)
	}
	if q := reqs[2]; q.Op != trace.OpSet || q.TTL != 1500*time.Millisecond || q.ValueSize != 3 {
		t.Errorf("PSETEX: %+v", q)
	}
	if q := reqs[3]; q.Op != trace.OpGet || len(q.Keys) != 3 {
		t.Errorf("MGET: %+v", q)
	}
	if q := reqs[4]; q.Op != trace.OpRMW || q.Change != trace.ChangeIncr || q.Delta != -7 {
		t.Errorf("INCRBY: %+v", q)
	}
	if q := reqs[5]; q.Op != trace.OpRMW || q.Change != trace.ChangeTTL || q.TTL != 5*time.Second {
		t.Errorf("EXPIRE: %+v", q)
	}
	if q := reqs[6]; q.Op != trace.OpDelete || len(q.Keys) != 2 {
		t.Errorf("DEL: %+v", q)
	}
	if q := reqs[7]; q.Op != trace.OpNone || q.Cmd != "select" {
		t.Errorf("SELECT: %+v, want unsupported, named", q)
	}
}

// write writes a generated trace to a file, compressed as asked.
func write(t *testing.T, dir string, s sample, compress string) (string, tracegen.Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := tracegen.Write(&buf, s.format, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, s.name+".trace"+compress)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var w io.WriteCloser = f
	switch compress {
	case ".gz":
		w = gzip.NewWriter(f)
	case ".zst":
		if w, err = zstd.NewWriter(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w != io.WriteCloser(f) {
		f.Close()
	}
	return path, st
}

func TestCompressedFilesStream(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{".gz", ".zst"} {
		for _, s := range samples {
			t.Run(s.name+c, func(t *testing.T) {
				path, want := write(t, dir, s, c)
				r, err := trace.Open(path, "")
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if r.Compression != strings.Trim(map[string]string{".gz": "gzip", ".zst": "zstd"}[c], ".") {
					t.Errorf("compression %q", r.Compression)
				}
				got, _ := readAll(t, r)
				if got.Requests != want.Requests || !maps.Equal(got.Unsupported, want.Unsupported) {
					t.Fatalf("read %d requests (%v), want %d (%v)", got.Requests, got.Unsupported, want.Requests, want.Unsupported)
				}
			})
		}
	}
}

// A corrupt line deep in a trace is an error naming its line, after every
// request before it; Check, reading the head, finds one there.
func TestCorruptLine(t *testing.T) {
	var buf bytes.Buffer
	if _, err := tracegen.Write(&buf, trace.CSV, tracegen.Config{Requests: 500}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	lines[300] = "12x,get,k,1,0,c"
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
		n++
	}
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != 301 || le.File != path {
		t.Fatalf("err %v, want a LineError at %s:301", err, path)
	}
	if n != 299 {
		t.Errorf("%d requests before the corrupt line, want 299", n)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("the error is not sticky: %v", again)
	}
	if _, err := trace.Check(path, "", 1000); !errors.As(err, &le) || le.Line != 301 {
		t.Errorf("Check of 1000 lines: %v, want the line 301", err)
	}
	if f, err := trace.Check(path, "", 100); err != nil || f != trace.CSV {
		t.Errorf("Check of 100 lines: %v %v, want csv and no error", f, err)
	}
}

func TestDetectRefuses(t *testing.T) {
	for _, in := range []string{"", "hello world\n", "1,2,3\n"} {
		if _, err := trace.NewReader(strings.NewReader(in), "x", ""); err == nil {
			t.Errorf("%q: detected a format", in)
		}
	}
	if _, err := trace.ParseFormat("parquet"); err == nil || !strings.Contains(err.Error(), "twitter") {
		t.Errorf("ParseFormat(parquet): %v", err)
	}
}

func TestMapKey(t *testing.T) {
	a := trace.MapKey(nil, []byte("anon-1"), 20)
	b := trace.MapKey(nil, []byte("anon-1"), 20)
	c := trace.MapKey(nil, []byte("anon-2"), 20)
	if len(a) != 20 || !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Errorf("MapKey: %q %q %q", a, b, c)
	}
	if k := trace.MapKey(nil, []byte("same"), 4); string(k) != "same" {
		t.Errorf("a key of the recorded size changed: %q", k)
	}
}

// A Twitter key may hold commas (the other fields are read from both
// ends); MONITOR clients may be a unix socket or a script.
func TestKeysWithCommasAndOtherClients(t *testing.T) {
	r, err := trace.NewReader(strings.NewReader("5,a,b,,c,5,10,7,get,0\n"), "t", trace.Twitter)
	if err != nil {
		t.Fatal(err)
	}
	_, reqs := readAll(t, r)
	if len(reqs) != 1 || string(reqs[0].Keys[0]) != string(trace.MapKey(nil, []byte("a,b,,c"), 5)) || reqs[0].ValueSize != 10 {
		t.Fatalf("%+v: want the key a,b,,c mapped to 5 bytes, a value of 10", reqs)
	}
	in := "1700000000.000001 [0 unix:/run/redis.sock] \"GET\" \"k\"\n1700000000.000002 [0 lua] \"SET\" \"k\" \"v\"\n"
	if r, err = trace.NewReader(strings.NewReader(in), "m", ""); err != nil {
		t.Fatal(err)
	}
	_, reqs = readAll(t, r)
	if len(reqs) != 2 || reqs[0].Client == reqs[1].Client || reqs[1].At != time.Microsecond {
		t.Fatalf("%+v: want two requests of two clients 1 µs apart", reqs)
	}
}
