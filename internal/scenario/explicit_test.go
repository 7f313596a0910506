package scenario

import (
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/workload/all"
)

// A value written in a file is checked as the same value given by a flag
// (issue 28): 0 where 0 is no value is refused with the bound and what
// leaving it out gives (it read as "default"), a timed phase of 0s is
// refused (it ran 10,000 ops), and a fraction where a whole number is
// expected is refused (it was truncated).
func TestExplicitValuesAreChecked(t *testing.T) {
	const head = "name: t\ntargets: [memory]\n"
	const wl = "workloads:\n  - {type: throughput}\n"
	for _, c := range []struct{ src, want string }{
		{head + "repeat: 0\n" + wl, "t.yaml:3: repeat must be at least 1; omit it for the default, 1"},
		{head + "client_threads: 0\n" + wl, "t.yaml:3: client_threads must be at least 1; omit it for the default, one thread per CPU the client may use"},
		{head + "repeat: 2.5\n" + wl, "t.yaml:3: repeat 2.5: want a whole number (a fraction is refused, not truncated)"},
		{head + "quick: {repeat: 0}\n" + wl, "t.yaml:3: repeat must be at least 1; omit it for the default, 1"},
		{head + "quick: {ops: 0}\n" + wl, "t.yaml:3: ops must be at least 1; omit it for the default"},
		{head + "load: {clients: 0}\n" + wl, "t.yaml:3: clients must be at least 1; omit it for the default"},
		{head + "load: {clients: 1.5}\n" + wl, "t.yaml:3: clients 1.5: want a whole number"},
		{head + "load: {duration: 0s}\n" + wl, "t.yaml:3: duration 0s: a timed phase of no time measures nothing; omit it for counted ops"},
		{head + "workloads:\n  - {type: throughput, load: {ops: 0}}\n", "t.yaml:4: ops must be at least 1"},
		{head + "workloads:\n  - {type: throughput, load: {pipeline: 0}}\n", "t.yaml:4: pipeline must be at least 1"},
		{head + "workloads:\n  - {type: mix, keyspace: 0}\n", "t.yaml:4: keyspace must be at least 1; omit it for the default"},
		{head + "workloads:\n  - {type: kv, value_size: 0}\n", "t.yaml:4: value_size must be at least 1; omit it for the default"},
		{head + "workloads:\n  - {type: kv, value_size: 1.5}\n", "t.yaml:4: value_size 1.5: want a whole number (a fraction is refused, not truncated)"},
		{head + "workloads:\n  - {type: kv, keys: [10, 2.5]}\n", "t.yaml:4: keys 2.5: want a whole number"},
		{head + "workloads:\n  - {type: hotkey, value_size: 1e3}\n", "value_size 1e3: want a whole number"},
		{head + "workloads:\n  - {type: sessions, sessions: {phase: churn, ttl: 1.5}}\n", "t.yaml:4: ttl 1.5: want a duration such as 10s or 500ms"},
	} {
		err := parseAndValidate(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n error %v\n want one line with %q", c.src, err, c.want)
		}
	}
	// The quick section's workload fields, under --quick.
	s, err := Parse("t.yaml", strings.NewReader(head+"quick: {value_size: 0}\n"+wl))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := s.ApplyQuick(all.Types()); err != nil {
		t.Fatal(err)
	}
	if err := validate(s, registry()); err == nil || !strings.Contains(err.Error(), "t.yaml: quick: value_size must be at least 1") {
		t.Errorf("quick: {value_size: 0}: %v", err)
	}
	// Zeros that are values stay accepted: no batch, no warm-up, a closed
	// loop, reads of expired sessions never, a direct network path.
	ok := "name: t\ntargets: [memory, sqlite]\nworkloads:\n  - {type: kv, keys: [10], batch: 0, load: {warmup_ops: 0}}\n  - {type: throughput, load: {rate: 0, warmup: 0s}}\n" +
		"  - {type: sessions, targets: [sqlite], sessions: {phase: churn, expired_reads: 0, reap_max_batches: 0}}\n"
	if err := parseAndValidate(ok); err != nil {
		t.Errorf("meaningful zeros refused: %v", err)
	}
}
