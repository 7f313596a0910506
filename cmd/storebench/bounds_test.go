package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAbsurdValuesAreRefused: values no run can use, from the command line
// or a scenario file, are refused before any work in one line that says
// the limit and why (issue 15, findings 4, 5, 6 and 9). Before, they
// panicked (--value-size), ran garbage to exit 0 (--rate 1e-9) or ate the
// machine's memory (--clients, --keys).
func TestAbsurdValuesAreRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return writeFile(t, dir, name, body) }
	const one = "name: x\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10]}\n"
	twoDocs := write("two.yaml", one+"---\nname: y\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [20]}\n")
	hugeValue := write("huge-value.yaml", "name: x\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10], value_size: 9223372036854775807}\n")
	lowRate := write("low-rate.yaml", "name: x\ntargets: [memory]\nworkloads:\n  - {type: throughput, load: {rate: 1e-9, duration: 1s}}\n")
	memory := []string{"--stores", "memory"}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"value size past Redis's largest", append([]string{"run", "kv", "--value-size", "9223372036854775807"}, memory...), []string{"--value-size 9223372036854775807: at most 536870912 bytes (512 MiB)", "proto-max-bulk-len"}},
		{"value size of a GB", append([]string{"run", "kv", "--value-size", "1000000000"}, memory...), []string{"--value-size 1000000000: at most 536870912 bytes"}},
		{"value size in a scenario file", []string{"run", hugeValue}, []string{hugeValue + ":4: kv: value_size 9223372036854775807: at most 536870912 bytes"}},
		{"rate below one op in the phase", append([]string{"run", "throughput", "--rate", "1e-9", "--duration", "1s"}, memory...), []string{"rate 1e-09 ops/s schedules less than one op in the 1s phase (one every 31.7 years)"}},
		{"rate below one op in a scenario file", []string{"run", lowRate}, []string{lowRate + ":4: throughput: rate 1e-09 ops/s schedules less than one op"}},
		{"rate past what the engine schedules", append([]string{"run", "throughput", "--rate", "1e300", "--duration", "1s"}, memory...), []string{"--rate 1e+300 ops/s: at most 1e+08"}},
		{"ops that take weeks at the rate", append([]string{"run", "hotkey", "--rate", "0.001", "--ops", "1000"}, memory...), []string{"1000 ops would take 11.6 days, longer than a phase may last (24h0m0s)"}},
		{"a million clients", append([]string{"run", "throughput", "--clients", "1000000"}, memory...), []string{"--clients 1000000: at most", "one connection each"}},
		{"a pipeline of 100 million", append([]string{"run", "throughput", "--pipeline", "100000000"}, memory...), []string{"--pipeline 100000000: at most 10000"}},
		{"a trillion keys", append([]string{"run", "kv", "--keys", "1000000000000"}, memory...), []string{"--keys 1000000000000: at most 1000000000"}},
		{"keys past int64", append([]string{"run", "kv", "--keys", "10000000000000M"}, memory...), []string{`--keys: "10000000000000M" is more than a count can hold`}},
		{"a phase of weeks", append([]string{"run", "hotkey", "--duration", "1000h"}, memory...), []string{"--duration 1000h0m0s: at most 24h0m0s"}},
		{"client memory past half the machine's", append([]string{"run", "kv", "--keys", "1000000000"}, memory...), []string{"kv on memory needs about", "of client memory", "the data set kept in this process", "half of this machine's"}},
		{"a second YAML document", []string{"run", twoDocs}, []string{twoDocs + ":5: a second YAML document"}},
	} {
		t.Run(c.name, func(t *testing.T) { refusesBadInput(t, nil, c.args, c.want) })
	}
}

// TestEmptyOutIsRefused: an empty --out wrote the result into the current
// directory (issue 15, finding 9); it is refused, and nothing is written.
func TestEmptyOutIsRefused(t *testing.T) {
	for _, out := range []string{"", " "} {
		cwd := t.TempDir()
		t.Chdir(cwd)
		refusesBadInput(t, nil, []string{"run", "kv", "--stores", "memory", "--keys", "10", "--out", out}, []string{`--out "` + out + `" names no directory`})
		if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
			t.Errorf("--out %q wrote %v into the current directory", out, entries)
		}
	}
}

// writeFile writes body to dir/name and returns the file's path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
