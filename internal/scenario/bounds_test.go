package scenario

import (
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/workload"
)

// parseAndValidate is what a run does with a scenario file before any work.
func parseAndValidate(src string) error {
	s, err := Parse("t.yaml", strings.NewReader(src))
	if err != nil {
		return err
	}
	s.Defaults()
	return validate(s, registry())
}

// Every numeric field is bounded (issue 15, findings 4, 5 and 6): absurd
// values are refused before any work, in one line naming the file, the
// line, the field, its limit and why.
func TestAbsurdValuesAreRefused(t *testing.T) {
	const head = "name: t\ntargets: [postgres]\nworkloads:\n"
	for _, c := range []struct{ wl, want string }{
		{"{type: kv, keys: [10], value_size: 9223372036854775807}", "t.yaml:4: kv: value_size 9223372036854775807: at most 536870912 bytes (512 MiB): Redis's largest value by default (proto-max-bulk-len"},
		{"{type: hotkey, value_size: 9223372036854775807}", "t.yaml:4: hotkey: value_size 9223372036854775807: at most 536870912 bytes"},
		{"{type: kv, keys: [1000000000000]}", "t.yaml:4: kv: keys 1000000000000: at most 1000000000: a billion keys take hours to write"},
		{"{type: kv, keys: [10], load: {clients: 1000000}}", "t.yaml:4: kv: clients 1000000: at most"},
		{"{type: kv, keys: [10000000], batch: 10000000}", "t.yaml:4: kv: batch 10000000: at most 1000000 keys"},
		{"{type: throughput, load: {clients: 1000000}}", "t.yaml:4: throughput: clients 1000000: at most"},
		{"{type: throughput, load: {pipeline: 100000000}}", "t.yaml:4: throughput: pipeline 100000000: at most 10000: redis-benchmark and memtier_benchmark"},
		{"{type: throughput, keyspace: 1000000000000}", "t.yaml:4: throughput: keyspace 1000000000000: at most 1000000000"},
		{"{type: mix, keyspace: 1000000000000}", "t.yaml:4: mix: keyspace 1000000000000: at most 1000000000"},
		{"{type: throughput, load: {ops: 1000000000000000}}", "t.yaml:4: throughput: ops 1000000000000000: at most 1000000000000"},
		{"{type: throughput, load: {duration: 1000h}}", "t.yaml:4: throughput: duration 1000h0m0s: at most 24h0m0s a phase"},
		{"{type: mix, load: {duration: 1s, warmup: 1000h}}", "t.yaml:4: mix: warmup 1000h0m0s: at most 24h0m0s"},
		{"{type: throughput, load: {duration: 1s, rate: 1e300}}", "t.yaml:4: throughput: rate 1e+300 ops/s: at most 1e+08, more than the engine can schedule"},
		{"{type: throughput, load: {duration: 1s, rate: 1e-9}}", "t.yaml:4: throughput: rate 1e-09 ops/s schedules less than one op in the 1s phase (one every 31.7 years): want at least 1 ops/s"},
		{"{type: hotkey, load: {ops: 10, rate: 1e-6}}", "t.yaml:4: hotkey: rate 1e-06 ops/s: 10 ops would take 116 days, longer than a phase may last (24h0m0s)"},
		{"{type: throughput, load: {duration: 1s, rate: .nan}}", "t.yaml:4: throughput: rate NaN: want a finite number of ops/s"},
		{"{type: sessions, sessions: {phase: churn, ttl: 8760h}}", "t.yaml:4: sessions: ttl 8760h0m0s: at most 720h0m0s: Memcached reads a longer expiry as a date"},
		{"{type: sessions, sessions: {phase: churn, create_rate: 1e300}}", "create_rate 1e+300 ops/s: at most 1e+08"},
		{"{type: sessions, sessions: {phase: churn, create_clients: 1000000}}", "create_clients 1000000: at most"},
		{"{type: durability, durability: {trial_timeout: 1000h}}", "t.yaml:4: durability: trial_timeout 1000h0m0s: at most 24h0m0s"},
		// Two problems of one workload, still one line.
		{"{type: throughput, load: {clients: -1, pipeline: -1}}", "t.yaml:4: throughput: clients must be positive, got -1; pipeline must not be negative, got -1"},
		{"{type: payments, payments: {stats_interval: 1ns}}", "t.yaml:4: payments: stats_interval 1ns: want 0 (never) or at least 100ms"},
		{"{type: payments, payments: {orgs: 100000000}}", "payments: orgs 100000000 × users_per_org 1: at most 1000000 users"},
		{"{type: payments, payments: {accounts: 100000000000}}", "payments: accounts 100000000000: at most 1000000000"},
		{"{type: payments, payments: {max_tries: 1000000}}", "payments: max_tries 1000000: want 1 to 1000"},
	} {
		err := parseAndValidate(head + "  - " + c.wl + "\n")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n error %v\n want one line with %q", c.wl, err, c.want)
		}
	}
	// The bounds themselves are accepted (those that need GiBs of memory,
	// such as 10,000 clients or 512 MiB values, in workload's tests).
	ok := head + "  - {type: kv, keys: [1000000000], batch: 1000000}\n  - {type: throughput, load: {clients: 1, pipeline: 10000}}\n  - {type: throughput, name: open, load: {clients: 1, ops: 1000000000000, rate: 100000000}}\n  - {type: hotkey, load: {duration: 24h, warmup: 24h}}\n"
	if err := parseAndValidate(ok); err != nil {
		t.Errorf("values at the bounds refused: %v", err)
	}
}

// A plan whose client memory would exceed half of the machine's is refused,
// with the estimate and the limit (issue 15, finding 6).
func TestPlanBeyondMemoryIsRefused(t *testing.T) {
	if budget, _ := workload.MemoryBudget(); budget <= 0 {
		t.Fatal("this machine's memory is unknown: the plans cannot be checked against it")
	}
	for _, c := range []struct{ src, want string }{
		// 10,000 clients × 10,000-deep pipelines of 512 MiB values.
		{"name: t\ntargets: [redis]\nworkloads:\n  - {type: throughput, value_size: 536870912, load: {clients: 10000, pipeline: 10000}}\n",
			"t.yaml:4: throughput on redis needs about 143 PiB of client memory (10000 clients × 14.6 TiB, 4 GiB shared), more than the"},
		// The memory store keeps its data set in the client: a billion 512 MiB values.
		{"name: t\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [1000000000], value_size: 536870912}\n",
			"the data set kept in this process 477 PiB), more than the"},
	} {
		err := parseAndValidate(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "storebench allows itself (half of this machine's") {
			t.Errorf("%s: error %v, want one with %q and the limit", c.src, err, c.want)
		}
	}
	// The same data set on a server is the server's memory, not the client's.
	if err := parseAndValidate("name: t\ntargets: [redis]\nworkloads:\n  - {type: kv, keys: [1000000000], value_size: 1048576}\n"); err != nil {
		t.Errorf("a server's data set counted as the client's: %v", err)
	}
}
