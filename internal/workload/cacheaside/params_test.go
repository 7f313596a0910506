package cacheaside

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// TestValidateRefuses: each bad parameter gets an error that names it and
// its bound, before any work.
func TestValidateRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Params
		want string
	}{
		{"value under the header", Params{Keyspace: workload.Keyspace{ValueSize: 8}}, "value_size 8: at least 32"},
		{"size mix below", Params{Keyspace: workload.Keyspace{ValueSize: 100}, ValueSizeMax: 50}, "value_size_max 50 is below"},
		{"keyspace", Params{Keyspace: workload.Keyspace{Keys: 2_000_000_000}}, "keyspace 2000000000: at most"},
		{"theta 1", Params{Theta: 1}, "zipfian theta 1"},
		{"theta NaN", Params{Theta: math.NaN()}, "zipfian theta NaN"},
		{"theta with uniform", Params{KeyDist: keydist.Uniform, Theta: 0.5}, "theta 0.5 is for a zipfian"},
		{"sequential", Params{KeyDist: keydist.Sequential}, "want uniform or zipfian"},
		{"ratio", Params{ReadRatio: f64(1.5)}, "read ratio must be between"},
		{"policy", Params{Policy: "write-through"}, `policy "write-through"`},
		{"negative ttl", Params{TTL: dur(-time.Second)}, "ttl -1s: want 0"},
		{"huge ttl", Params{TTL: dur(48 * time.Hour)}, "ttl 48h0m0s: want 0 (no cache) to 24h0m0s"},
		{"pipeline", Params{Load: workload.Load{Pipeline: 4}}, "pipeline 4 is not supported"},
		{"connect per op", Params{Load: workload.Load{ConnectPerOp: true}}, "connect-per-op is not supported"},
		{"protection", Params{Stampede: Stampede{Protections: []string{"magic"}}}, `stampede protection "magic"`},
		{"protection twice", Params{Stampede: Stampede{Protections: []string{"none", "none"}}}, "listed twice"},
		{"stampede ttl", Params{Stampede: Stampede{Protections: []string{"none"}, TTL: time.Millisecond}}, "stampede ttl 1ms: want 100ms"},
		{"stampede too short", Params{Stampede: Stampede{Protections: []string{"none"}, TTL: 2 * time.Second, Duration: time.Second}}, "shorter than its ttl"},
		{"lease ttl", Params{Stampede: Stampede{Protections: []string{"lease"}, LeaseTTL: time.Hour}}, "lease ttl 1h0m0s: want 10ms to 1m0s"},
		{"lease poll", Params{Stampede: Stampede{Protections: []string{"lease"}, LeasePoll: time.Nanosecond}}, "lease poll 1ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "cache-aside: ") {
				t.Errorf("error %q does not name the workload", err)
			}
		})
	}
	if err := (Params{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Params{TTL: dur(0), Stampede: Stampede{Protections: Protections}}).Validate(); err != nil {
		t.Errorf("TTL 0 and every protection: %v", err)
	}
}

// TestMemoryCountsTheTracker: the staleness tracker's bytes per key are in
// the estimate, so a huge keyspace is refused by the plan's memory check.
func TestMemoryCountsTheTracker(t *testing.T) {
	small := Params{Keyspace: workload.Keyspace{Keys: 1000}}.Memory()
	big := Params{Keyspace: workload.Keyspace{Keys: 100_000_000}}.Memory()
	if d := big.Shared - small.Shared; d < (100_000_000-1000)*TrackBytesPerKey {
		t.Errorf("shared memory grew by %d bytes for 99,999,000 more keys, want at least %d a key", d, TrackBytesPerKey)
	}
	if big.Clients != DefaultClients {
		t.Errorf("clients %d, want %d", big.Clients, DefaultClients)
	}
	withStampede := Params{Stampede: Stampede{Protections: []string{"none"}}}.Memory()
	if withStampede.Clients != DefaultStampedeClients {
		t.Errorf("with a stampede: clients %d, want its %d", withStampede.Clients, DefaultStampedeClients)
	}
}

// TestSizeMix: each key keeps its size, within the bounds, and the sizes vary.
func TestSizeMix(t *testing.T) {
	p := Params{Keyspace: workload.Keyspace{ValueSize: 40, Seed: 3}, ValueSizeMax: 60}.WithDefaults()
	sizes := map[int]bool{}
	for i := range int64(1000) {
		n := p.sizeOf(i)
		if n < 40 || n > 60 || n != p.sizeOf(i) {
			t.Fatalf("key %d: size %d, want a fixed size in [40, 60]", i, n)
		}
		sizes[n] = true
	}
	if len(sizes) < 15 {
		t.Errorf("%d distinct sizes over 1000 keys, want most of the 21", len(sizes))
	}
}

// TestEntrySearchFields: a bad slo or search field is refused naming the
// workload, before any work; an slo makes a search, recorded with the cell.
func TestEntrySearchFields(t *testing.T) {
	caches := &Section{Caches: []string{NoCache}}
	for _, c := range []struct {
		name string
		e    Spec
		want string
	}{
		{"bad slo", Spec{CacheAside: caches, Search: capacity.Search{SLO: []string{"p99<1ms"}}}, "cache-aside: capacity: slo"},
		{"bad precision", Spec{CacheAside: caches, Search: capacity.Search{SLO: []string{"p99<=1ms"}, Precision: 0.9}}, "precision 0.9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.e.Validate(workload.Load{}, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "cache-aside: ") || strings.Contains(err.Error(), "slo: slo") {
				t.Fatalf("Validate() = %v, want a cache-aside error containing %q (the field named once)", err, c.want)
			}
		})
	}
	// A quick section's step bounds land on entries without an slo too.
	if p, err := (&Spec{CacheAside: caches, Search: capacity.Search{MinStep: time.Second}}).params(workload.Load{}, 1); err != nil || p.Search != nil {
		t.Errorf("search fields without an slo: search %+v, %v; want none", p.Search, err)
	}
	e := Spec{CacheAside: caches, Search: capacity.Search{SLO: []string{"p99<=10ms"}, Need: 5000}}
	p, err := e.params(workload.Load{Clients: 6}, 1)
	if err != nil || p.Search == nil || p.Search.Connections != 6 || len(p.Search.SLOs) != 1 {
		t.Fatalf("params with an slo: %+v, %v", p.Search, err)
	}
	if c := p.CellParams(); len(c.SLO) != 1 || c.SLO[0] != "p99<=10ms" || c.NeedOpsS != 5000 {
		t.Errorf("recorded slo %v, need %v", c.SLO, c.NeedOpsS)
	}
}
