package workload

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Each bound accepts its limit and refuses one past it, saying the limit
// and why; below the range it says what is wanted.
func TestBounds(t *testing.T) {
	clients, _ := ClientLimit()
	for _, c := range []struct {
		name     string
		check    func(n int64) error
		lo, hi   int64
		tooLarge string
	}{
		{"clients", func(n int64) error { return CheckClients("clients", int(n)) }, 1, int64(clients), "one connection each"},
		{"pipeline", func(n int64) error { return CheckPipeline("pipeline", int(n)) }, 0, MaxPipeline, "redis-benchmark and memtier_benchmark"},
		{"batch", func(n int64) error { return CheckBatch("batch", int(n)) }, 0, MaxBatch, "built in client memory"},
		{"value_size", func(n int64) error { return CheckValueSize("value_size", int(n)) }, 1, MaxValueSize, "proto-max-bulk-len"},
		{"keys", func(n int64) error { return CheckKeys("keys", n) }, 1, MaxKeys, "take hours to write"},
		{"ops", func(n int64) error { return CheckOps("ops", n, 1) }, 1, MaxOps, "days of work"},
	} {
		if err := c.check(c.hi); err != nil {
			t.Errorf("%s at its limit %d: %v", c.name, c.hi, err)
		}
		if err := c.check(c.lo); err != nil {
			t.Errorf("%s at its least %d: %v", c.name, c.lo, err)
		}
		if err := c.check(c.hi + 1); err == nil || !strings.Contains(err.Error(), "at most") || !strings.Contains(err.Error(), c.tooLarge) {
			t.Errorf("%s %d: %v, want the limit and %q", c.name, c.hi+1, err, c.tooLarge)
		}
		if err := c.check(math.MinInt32); err == nil || !strings.Contains(err.Error(), c.name+" must") {
			t.Errorf("%s %d: %v", c.name, math.MinInt32, err)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "must not be negative", MaxDuration + 1: "at most 24h0m0s a phase", MaxDuration: "", 0: ""} {
		if err := CheckDuration("duration", d); (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("duration %v: %v, want %q", d, err, want)
		}
	}
}

// An open-loop rate must schedule at least one op in the phase and end
// within a phase's longest time, and stay what the engine can schedule.
func TestCheckRate(t *testing.T) {
	for _, c := range []struct {
		rate float64
		d    time.Duration
		ops  int64
		want string // "" = accepted
	}{
		{0, time.Second, 0, ""},
		{1, time.Second, 0, ""},
		{0.5, time.Second, 0, "schedules less than one op in the 1s phase (one every 2s): want at least 1 ops/s"},
		{1e-9, time.Second, 0, "(one every 31.7 years)"},
		{1, 0, 86400, ""},
		{1, 0, 86401, "86401 ops would take 1 days, longer than a phase may last"},
		{1e8, time.Second, 0, ""},
		{1e8 + 1, time.Second, 0, "at most 1e+08"},
		{math.Inf(1), time.Second, 0, "want a finite number"},
		{-1, time.Second, 0, "want a finite number"},
	} {
		err := CheckRate("rate", c.rate, c.d, c.ops)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("rate %v over %v / %d ops: %v, want %q", c.rate, c.d, c.ops, err, c.want)
		}
	}
}

// Pre-population builds each call's keys and values in memory: large
// values make smaller calls, so 1,000 values of 100 MiB are never held at
// once (100 GiB) by each of its connections.
func TestPopulateChunksAreBoundedInBytes(t *testing.T) {
	for vs, want := range map[int]int64{3: fillChunk, 100: fillChunk, 64 << 10: 63, 4 << 20: 1, 512 << 20: 1} {
		if got := fillKeys(vs); got != want {
			t.Errorf("values of %d bytes: %d per call, want %d", vs, got, want)
		}
	}
	if got := PopulateBytes(Keyspace{Keys: 1000, ValueSize: 100 << 20}, 50); got > 4*(ConnBytes+2*(KeyBytes+100<<20)) {
		t.Errorf("populating 100 MiB values is estimated at %s", FormatBytes(float64(got)))
	}
}

func TestEstimate(t *testing.T) {
	e := Estimate{Clients: 50, PerClient: 1 << 20, Shared: 4 << 20, Data: 1 << 30}
	if got := e.Bytes(false); got != 54<<20 {
		t.Errorf("without data: %v", got)
	}
	if err := CheckMemory(e, false, 100<<20, "a test's"); err != nil {
		t.Error(err)
	}
	err := CheckMemory(e, true, 100<<20, "a test's")
	want := "needs about 1.05 GiB of client memory (50 clients × 1 MiB, 4 MiB shared, the data set kept in this process 1 GiB), more than the 100 MiB storebench allows itself (a test's)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	if CheckMemory(Estimate{Clients: math.MaxInt32, PerClient: math.MaxInt64, Shared: math.MaxInt64}, true, 1, "") == nil {
		t.Error("an estimate past int64 passed")
	}
}

// A Validate's answer names the workload once, carries every problem (so
// errors.Is still finds each) and passes over the checks that found none.
func TestRefuse(t *testing.T) {
	if err := Refuse("mix", nil, nil); err != nil {
		t.Errorf("nothing wrong: got %v, want nil", err)
	}
	if err := Refuse("mix"); err != nil {
		t.Errorf("no checks: got %v, want nil", err)
	}
	keys, load := errors.New("keys must be positive"), errors.New("clients must be positive")
	err := Refuse("mix", keys, nil, load)
	if got, want := err.Error(), "mix: keys must be positive\nclients must be positive"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, keys) || !errors.Is(err, load) {
		t.Errorf("%v: the problems are not found by errors.Is", err)
	}
}
