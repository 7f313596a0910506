package main

import "testing"

// TestYCSBScanRefused: YCSB's E scans, which no store offers yet: refused
// before any work, one line, exit 2, on the command line and in a file.
func TestYCSBScanRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"e on memcached", []string{"run", "ycsb", "--ycsb", "e", "--stores", "memcached"}},
		{"e beside a", []string{"run", "ycsb", "--ycsb", "a,e", "--stores", "memory", "--records", "10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			refusesBadInput(t, nil, c.args, []string{"ycsb e: scans (scanproportion 0.95) need a store that scans in key order"})
		})
	}
}
