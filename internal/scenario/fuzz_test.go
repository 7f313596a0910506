package scenario

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/suites"
)

// FuzzParse reads any bytes as a scenario file, as `storebench run
// file.yaml` does before any work (Parse, Defaults, Validate against every
// store kind): nothing panics, and an error is one line naming the file.
func FuzzParse(f *testing.F) {
	for _, name := range suites.Names() {
		b, _ := suites.Open(name)
		f.Add(b)
	}
	const head = "name: t\ntargets: [memory, redis, postgres, sqlite]\nworkloads:\n"
	for _, wl := range []string{
		// Issue 15's cases.
		"{type: kv, keys: [10], value_size: 9223372036854775807}",
		"{type: throughput, load: {duration: 1s, rate: 1e300}}",
		"{type: throughput, load: {duration: 1s, rate: 1e-9, clients: 50}}",
		"{type: throughput, load: {clients: 1000000}}",
		"{type: throughput, load: {pipeline: 100000000}}",
		"{type: kv, keys: [1000000000000]}",
		"{type: kv, keys: [1000000000], value_size: 1000000000}",
		"{type: mix, keyspace: 1000000000, value_size: 536870912, load: {clients: 10000}}",
		// Huge, negative and non-finite numbers in every field.
		"{type: kv, keys: [-1, 0, 9223372036854775807], batch: -9223372036854775808}",
		"{type: kv, keys: [1e300]}",
		"{type: hotkey, value_size: -1, load: {ops: -1, warmup_ops: 9223372036854775807}}",
		"{type: hotkey, load: {ops: 9223372036854775807, warmup_ops: 9223372036854775807, rate: 1}}",
		"{type: web, value: x, load: {duration: 2562047h47m16.854775807s, warmup: -1ns}}",
		"{type: mix, read_ratio: .nan, load: {rate: .inf, duration: 1s}}",
		"{type: mix, read_ratio: -.inf, load: {rate: -.inf}}",
		"{type: throughput, keyspace: -9223372036854775808, load: {rtt: 1ms, jitter: 2562047h}}",
		"{type: sessions, sessions: {phase: churn, ttl: 2562047h, active_mean: 2562047h, create_rate: 1e-300, time_scale: 1e-300}}",
		"{type: sessions, sessions: {phase: churn, keepalive_chunk: 9223372036854775807, reap_batch: -1, observe_every: 1ns, create_clients: 1000000}}",
		"{type: sessions, sessions: {phase: insert, payload_size: 9223372036854775807}, load: {ops: 9223372036854775807}}",
		"{type: payments, payments: {accounts: 9223372036854775807, orgs: 9223372036854775807, users_per_org: 9223372036854775807}}",
		"{type: payments, payments: {initial_balance: 9223372036854775807, amount_min: -1, amount_max: 9223372036854775807, max_tries: 9223372036854775807, stats_interval: 1ns, steady_window: -1s}}",
	} {
		f.Add([]byte(head + "  - " + wl + "\n"))
	}
	for _, wl := range []string{
		"{type: durability, durability: {trials: 9223372036854775807, min_acked: -1, kill_window: 2562047h, trial_timeout: -1s}}",
		"{type: durability, value_size: 9223372036854775807, load: {clients: 9223372036854775807}}",
	} {
		f.Add([]byte("name: t\ntargets: [redis, sqlite]\nworkloads:\n  - " + wl + "\n"))
	}
	for _, src := range []string{
		head + "  - {type: kv}\n---\nname: u\n",
		head + "  - {type: kv}\n---\n---\n",
		"name: t\nrepeat: 9223372036854775807\nclient_threads: -9223372036854775808\nseed: -1\ntargets: [memory]\nworkloads: [{type: kv}]\nload: {clients: 1e300}\n",
		"name: t\ntargets: [memory]\nworkloads: [{type: kv}]\nquick: {keys: [-1], ops: -1, duration: -1s, repeat: 1000}\n",
		"name: \"a\\nb\"\ntargets: [\"x\\ny\"]\nworkloads: [{type: \"k\\nv\"}]\n",
		"&a [*a]", "", "---", "- - - -", "{", "name: t\ntargets: !!binary AAAA\n",
	} {
		f.Add([]byte(src))
	}
	reg := registry()
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("t.yaml", bytes.NewReader(src))
		if err == nil {
			s.Defaults()
			err = validate(s, reg)
		}
		if err == nil {
			return
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "t.yaml") {
			t.Fatalf("%q: the error is not one line naming the file:\n%s", src, msg)
		}
	})
}
