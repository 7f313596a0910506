package cli

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A value given by a flag and the same value in a scenario file go through
// one bound: the same limit, for the same reason (issue 15, finding 6).
func TestFlagsAndFilesShareTheBounds(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		workload, flag, field, value, limit string
	}{
		{"kv", "value-size", "value_size", "9223372036854775807", ": at most 536870912 bytes (512 MiB): Redis's largest value by default"},
		{"throughput", "clients", "load: {clients", "1000000", ": at most"},
		{"throughput", "pipeline", "load: {pipeline", "100000000", ": at most 10000: redis-benchmark"},
		{"throughput", "ops", "load: {ops", "1000000000000000", ": at most 1000000000000: days of work"},
		{"hotkey", "duration", "load: {duration", "1000h", ": at most 24h0m0s a phase"},
		{"throughput", "rate", "load: {duration: 1s, rate", "1e300", " ops/s: at most 1e+08, more than the engine can schedule"},
	} {
		flagErr := checkRunFlags(c.workload, []string{"--stores", "memory", "--" + c.flag, c.value})
		field := c.field + ": " + c.value
		if strings.HasPrefix(c.field, "load: {") {
			field += "}"
		}
		file := filepath.Join(dir, c.flag+".yaml")
		if err := os.WriteFile(file, []byte("name: x\ntargets: [memory]\nworkloads:\n  - type: "+c.workload+"\n    "+field+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fileErr := checkRunFlags(file, nil)
		for _, err := range []error{flagErr, fileErr} {
			if err == nil || !strings.Contains(err.Error(), c.limit) {
				t.Errorf("--%s %s / %s: %v, want %q", c.flag, c.value, field, err, c.limit)
			}
		}
		if flagErr != nil && !strings.HasPrefix(flagErr.Error(), "--"+c.flag+" ") {
			t.Errorf("the flag's error does not name it: %v", flagErr)
		}
	}
}

// An empty --out wrote into the current directory (issue 15, finding 9).
func TestEmptyOutIsBadInput(t *testing.T) {
	for _, out := range []string{"", "  "} {
		err := checkRunFlags("kv", []string{"--stores", "memory", "--keys", "10", "--out", out})
		if err == nil || !strings.Contains(err.Error(), "names no directory") {
			t.Errorf("--out %q: %v", out, err)
		}
	}
}

// Planning a hotkey run of the largest value does not build the value: the
// run does, a plan only records its size (a 512 MiB value cost the plan
// 1 GiB and seconds, before any check was done with it).
func TestPlanBuildsNoValue(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := checkRunFlags("hotkey", []string{"--stores", "memory", "--value-size", "536870912"}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("planning allocated %d MiB", n>>20)
	}
}

// --keys 100,100 ran two cells with one id (issue 28): a usage error (exit
// 2) of one line naming the value, as the same list in a file gets.
func TestRepeatedKeyCountIsRefused(t *testing.T) {
	err := checkRunFlags("kv", []string{"--stores", "memory", "--keys", "100,1000,100"})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "keys=100 twice") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--keys 100,1000,100: %v, want a usage error of one line naming keys=100", err)
	}
}

// A 0 given by a flag and written in a file get one answer (issue 28): the
// file's read as "default" where the flag was refused (repeat, keyspace,
// client_threads), and --duration 0s silently ran 10,000 ops.
func TestZeroFlagsAndFieldsShareTheRule(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ flag, field, value, want string }{
		{"repeat", "repeat", "0", "repeat must be at least 1; omit it for the default, 1"},
		{"client-threads", "client_threads", "0", "client_threads must be at least 1; omit it for the default, one thread per CPU"},
		{"duration", "load: {duration", "0s", "duration 0s: a timed phase of no time measures nothing; omit it for counted ops"},
		{"clients", "load: {clients", "0", "clients must be at least 1; omit it for the default"},
		{"ops", "load: {ops", "0", "ops must be at least 1; omit it for the default"},
		{"pipeline", "load: {pipeline", "0", "pipeline must be at least 1; omit it for the default, 1 (one op per round trip)"},
	} {
		flagErr := checkRunFlags("throughput", []string{"--stores", "memory", "--" + c.flag, c.value})
		field := c.field + ": " + c.value
		if strings.HasPrefix(c.field, "load: {") {
			field += "}"
		}
		file := filepath.Join(dir, c.flag+".yaml")
		if err := os.WriteFile(file, []byte("name: x\ntargets: [memory]\n"+field+"\nworkloads:\n  - type: throughput\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fileErr := checkRunFlags(file, nil)
		want := strings.Replace(c.want, strings.SplitN(c.want, " ", 2)[0], "--"+c.flag, 1)
		var ue *UsageError
		if !errors.As(flagErr, &ue) || !strings.HasPrefix(flagErr.Error(), want) {
			t.Errorf("--%s %s: %v, want a usage error %q", c.flag, c.value, flagErr, want)
		}
		if fileErr == nil || !strings.Contains(fileErr.Error(), ".yaml:3: "+c.want) {
			t.Errorf("%s: %v, want %q", field, fileErr, c.want)
		}
	}
}
