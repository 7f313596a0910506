package replay

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result/replay"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

var openers = workloadtest.Openers

type sample struct {
	name   string
	format trace.Format
	cfg    tracegen.Config
}

func samples(binary bool) []sample {
	return []sample{
		{"twitter", trace.Twitter, tracegen.Config{}},
		{"kvcache-v1", trace.KVCache, tracegen.Config{KVCacheV1: true}},
		{"kvcache-v2", trace.KVCache, tracegen.Config{}},
		{"redis-monitor", trace.RedisMonitor, tracegen.Config{BinaryKeys: binary}},
		{"csv", trace.CSV, tracegen.Config{BinaryKeys: binary}},
	}
}

// writeTrace writes a generated trace into dir.
func writeTrace(t *testing.T, dir string, s sample) (string, tracegen.Stats) {
	t.Helper()
	path := filepath.Join(dir, s.name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := tracegen.Write(f, s.format, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return path, st
}

func run(t testing.TB, st store.Store, p Params) (metrics.Phase, *replay.Summary) {
	t.Helper()
	phases, sum, err := Run(context.Background(), st, p, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || sum == nil {
		t.Fatalf("phases %d, summary %v", len(phases), sum)
	}
	return phases[0], sum
}

// TestReplayEveryFormatOnEveryStore: a generated trace in each format
// replays with replayed = the expanded requests less the unsupported ones,
// each sent once (the phase's ops), none failing.
func TestReplayEveryFormatOnEveryStore(t *testing.T) {
	for _, kind := range []string{"memory", "redis", "memcached", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			st := openers[kind](t)
			dir := t.TempDir()
			// memcached's keys are text without spaces: the binary keys
			// are for the others.
			for _, s := range samples(kind != "memcached") {
				t.Run(s.name, func(t *testing.T) {
					path, want := writeTrace(t, dir, s)
					ph, sum := run(t, st, Params{Trace: path, Speed: "8", Load: workload.Load{Clients: 3}})
					var unsupported int64
					for _, n := range want.Unsupported {
						unsupported += n
					}
					if sum.Requests != want.Requests || sum.Replayed != want.Requests-unsupported || !maps.Equal(sum.Unsupported, want.Unsupported) {
						t.Fatalf("requests %d, replayed %d, unsupported %v; the trace has %d requests, %v unsupported",
							sum.Requests, sum.Replayed, sum.Unsupported, want.Requests, want.Unsupported)
					}
					if ph.Ops != sum.Replayed || len(ph.Errors) > 0 {
						t.Fatalf("phase: %d ops, errors %v %q; replayed %d", ph.Ops, ph.Errors, ph.ErrorSamples, sum.Replayed)
					}
					var byOp int64
					for name, o := range ph.ByOp {
						byOp += o.Ops
						if w := want.ByOp[name]; o.Ops != w {
							t.Errorf("%s: %d ops, the trace has %d", name, o.Ops, w)
						}
					}
					if byOp != ph.Ops {
						t.Errorf("ops by kind add up to %d, not %d", byOp, ph.Ops)
					}
					if sum.Hits == 0 || sum.Misses == 0 {
						t.Errorf("hits %d, misses %d: a zipfian trace that sets its keys has both", sum.Hits, sum.Misses)
					}
					if s.cfg.KVCacheV1 != sum.Untimed || sum.Spread != (s.name == "twitter" || s.name == "kvcache-v2") {
						t.Errorf("untimed %v, spread %v", sum.Untimed, sum.Spread)
					}
				})
			}
		})
	}
}

// A get of a key the trace never set is a miss; a set key is a hit after.
func TestMissesAsRecorded(t *testing.T) {
	st := openers["memory"](t)
	path := filepath.Join(t.TempDir(), "t.csv")
	in := "time_us,op,key,value_size,ttl_s\n0,get,a,0,0\n10,set,a,5,0\n20,get,a,0,0\n30,get,b,0,0\n40,incr,n,0,0\n50,incr,n,0,0\n60,get,n,0,0\n"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	_, sum := run(t, st, Params{Trace: path, Load: workload.Load{Clients: 1}})
	// get a: miss; get a: hit; get b: miss; incr n: miss; incr n: hit; get n: hit.
	if sum.Hits != 3 || sum.Misses != 3 {
		t.Errorf("hits %d, misses %d, want 3 and 3", sum.Hits, sum.Misses)
	}
	kv := openKV(t, st)
	if v, ok, err := kv.Get(context.Background(), []byte("n"), nil); err != nil || !ok || string(v) != "2" {
		t.Errorf("n = %q (%v, %v) after two INCRs, want 2", v, ok, err)
	}
}

func openKV(t *testing.T, st store.Store) store.KV {
	t.Helper()
	c, err := st.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(store.KV)
}

// A corrupt line deep in the trace fails the cell, naming the line, after
// replaying what came before it; a corrupt head is refused before any work.
func TestCorruptLines(t *testing.T) {
	st := openers["memory"](t)
	dir := t.TempDir()
	var lines []string
	lines = append(lines, "time_us,op,key,value_size,ttl_s")
	for i := range 20000 {
		lines = append(lines, "0,set,k"+strings.Repeat("x", i%5)+",10,0")
	}
	deep := append(append([]string(nil), lines...), "1,get")
	path := filepath.Join(dir, "deep.csv")
	if err := os.WriteFile(path, []byte(strings.Join(deep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	phases, sum, err := Run(context.Background(), st, Params{Trace: path, Speed: SpeedMax, Load: workload.Load{Clients: 2}}, workload.Hooks{})
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != 20002 || !strings.Contains(err.Error(), "deep.csv:20002") {
		t.Fatalf("err %v, want the line deep.csv:20002", err)
	}
	if sum == nil || sum.Replayed != 20000 || len(phases) != 1 || phases[0].Ops != 20000 {
		t.Fatalf("summary %+v, phases %d: want the 20000 requests before the line replayed", sum, len(phases))
	}
	head := filepath.Join(dir, "head.csv")
	if err := os.WriteFile(head, []byte(strings.Join(append(lines[:10:10], "x,y"), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (Params{Trace: head}).Validate(); err == nil || !strings.Contains(err.Error(), "head.csv:11") {
		t.Errorf("Validate: %v, want head.csv:11", err)
	}
	if err := (Params{Trace: head, Format: "pcap"}).Validate(); err == nil || !strings.Contains(err.Error(), "unknown trace format") {
		t.Errorf("Validate: %v, want the unknown format", err)
	}
	if err := (Params{Trace: path, Speed: "fast"}).Validate(); err == nil {
		t.Error("speed fast validated")
	}
}

// --speed 2 halves the measured duration (within 5%).
func TestSpeedHalvesDuration(t *testing.T) {
	st := openers["memory"](t)
	path, _ := writeTrace(t, t.TempDir(), sample{"csv", trace.CSV, tracegen.Config{Requests: 4000, Seconds: 4}})
	ph1, s1 := run(t, st, Params{Trace: path, Speed: "1", Load: workload.Load{Clients: 4}})
	ph2, _ := run(t, st, Params{Trace: path, Speed: "2", Load: workload.Load{Clients: 4}})
	if ratio := ph1.DurationS / ph2.DurationS; math.Abs(ratio-2) > 0.1 {
		t.Errorf("durations %.3fs at speed 1 and %.3fs at speed 2: ratio %.3f, want 2 ± 5%%", ph1.DurationS, ph2.DurationS, ratio)
	}
	if math.Abs(ph1.DurationS-s1.TraceDurationS) > 0.05*s1.TraceDurationS {
		t.Errorf("speed 1 took %.3fs, the trace spans %.3fs", ph1.DurationS, s1.TraceDurationS)
	}
	var traced int64
	for _, n := range s1.TraceRate {
		traced += n
	}
	if traced != s1.Replayed || len(s1.TraceRate) != 4 {
		t.Errorf("trace rate %v: want 4 seconds adding up to %d", s1.TraceRate, s1.Replayed)
	}
	if l := s1.LatenessUs; l == nil || l.P99 <= 0 || l.Max < l.P99 {
		t.Errorf("lateness %+v", s1.LatenessUs)
	}
}
