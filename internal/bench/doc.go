// Package bench holds storebench's side-by-side benchmarks against the
// field's own load generators (versus_test.go): redis-benchmark, pgbench and
// memaslap (Debian's memcaslap) drive the same managed server as
// storebench's own workload, in one run, interleaved, and the figures are
// printed as ratios (storebench ÷ tool) with the client's and the server's
// CPU per operation of each. BenchmarkFloorRedisGet (floor_linux_test.go)
// compares storebench's one-at-a-time Redis GET latency with a loop of raw
// system calls on one blocking socket: the floor of a round trip here.
//
// The package has no tests and starts nothing unless a benchmark runs:
//
//	go test -run '^$' -bench 'Versus|Floor' -benchtime 1x ./internal/bench/
package bench
