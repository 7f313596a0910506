package workload

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/load"
)

// Bounds on the parameters the workloads share. Each is checked by one
// function below, which scenario files and command-line flags both go
// through, so a value gets the same answer wherever it was written. A bound
// refuses what cannot work or is surely a typo, and says why.
const (
	// MaxClients: each client is a connection (a file descriptor), and
	// Redis, the store that accepts most by default, takes 10,000
	// (maxclients); ClientLimit lowers it to what this process may open.
	MaxClients = 10000
	// MaxPipeline: redis-benchmark and memtier_benchmark are run with
	// depths of 1 to a few hundred; a deeper pipeline measures the
	// client's buffering, not the store.
	MaxPipeline = 10000
	// MaxBatch bounds the keys of one kv bulk write: the call's keys and
	// values are built in client memory first (the suites use 1,000).
	MaxBatch = 1_000_000
	// MaxValueSize is Redis's proto-max-bulk-len default (512 MiB), the
	// largest value a store here accepts by default (Memcached's items
	// stop at 1 MiB, MariaDB's packets at 16 MiB); the client holds
	// every value it writes or reads in its own memory.
	MaxValueSize = 512 << 20
	// MaxKeys bounds key counts and keyspaces: keys derive from an index,
	// so their count costs the client nothing, but a billion keys already
	// take hours to write one by one and tens of GB of the store's memory.
	MaxKeys = 1_000_000_000
	// MaxOps bounds op counts: a trillion ops is days at the fastest rate
	// a store here reaches; more is a typo.
	MaxOps = 1_000_000_000_000
	// MaxDuration bounds a measured phase, a warm-up and an open-loop
	// schedule: a longer one is more likely a typo (1000h) than a soak
	// test, which --repeat runs in day-long rounds.
	MaxDuration = 24 * time.Hour
)

// reservedFiles are file descriptors kept for storebench's own use (the
// result, logs, managed servers' pipes, pre-population connections) when
// the open-file limit bounds the clients.
const reservedFiles = 100

// ClientLimit is the most clients a phase may have here, and why: MaxClients,
// or fewer where the open-file limit (ulimit -n) allows fewer connections.
func ClientLimit() (int, string) {
	limit, why := MaxClients, "one connection each, and Redis accepts 10000 by default (maxclients)"
	if files := openFileLimit(); files > 0 && files-reservedFiles < limit {
		limit = max(files-reservedFiles, 1)
		why = fmt.Sprintf("one connection each, and this process may open %d files (ulimit -n), %d kept for its own", files, reservedFiles)
	}
	return limit, why
}

// CheckClients bounds a count of connections: clients, create_clients.
func CheckClients(field string, n int) error {
	limit, why := ClientLimit()
	return within(field, int64(n), 1, int64(limit), "", why)
}

// CheckPipeline bounds a pipeline depth (0 or 1: none).
func CheckPipeline(field string, n int) error {
	return within(field, int64(n), 0, MaxPipeline, "", "redis-benchmark and memtier_benchmark use depths up to a few hundred; deeper measures the client's buffering")
}

// CheckBatch bounds the keys of one bulk write (0: one by one).
func CheckBatch(field string, n int) error {
	return within(field, int64(n), 0, MaxBatch, " keys", "a call's keys and values are built in client memory first")
}

// CheckValueSize bounds a value's size in bytes.
func CheckValueSize(field string, n int) error {
	return within(field, int64(n), 1, MaxValueSize, " bytes (512 MiB)", "Redis's largest value by default (proto-max-bulk-len; Memcached's is 1 MiB), and the client holds each value in memory")
}

// CheckKeys bounds a key count or keyspace.
func CheckKeys(field string, n int64) error {
	return within(field, n, 1, MaxKeys, "", "a billion keys take hours to write and tens of GB of the store's memory")
}

// CheckOps bounds an op count; lo is 1 for measured ops, 0 for warm-up ops.
func CheckOps(field string, n, lo int64) error {
	return within(field, n, lo, MaxOps, "", "days of work at the fastest rate a store here reaches")
}

// CheckDuration bounds a phase's duration or warm-up (0: unset).
func CheckDuration(field string, d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("%s %v: must not be negative", field, d)
	case d > MaxDuration:
		return fmt.Errorf("%s %v: at most %v a phase: a longer one is likely a typo; repeat a day-long phase instead (repeat, --repeat)", field, d, MaxDuration)
	}
	return nil
}

// CheckRate bounds an open-loop rate in ops/s (0: closed loop) for a phase
// of duration d, or, when d is 0, of ops operations: the engine's own
// bounds, and a schedule with at least one op in the phase that ends within
// MaxDuration.
func CheckRate(field string, rate float64, d time.Duration, ops int64) error {
	if err := load.CheckRate(field, rate); err != nil || rate == 0 {
		return err
	}
	switch {
	case d > 0 && rate*d.Seconds() < 1:
		return fmt.Errorf("%s %v ops/s schedules less than one op in the %v phase (one every %s): want at least %.3g ops/s, or a longer duration", field, rate, d, load.FormatSeconds(1/rate), 1/d.Seconds())
	case d == 0 && float64(ops)/rate > MaxDuration.Seconds():
		return fmt.Errorf("%s %v ops/s: %d ops would take %s, longer than a phase may last (%v): raise the rate or lower ops", field, rate, ops, load.FormatSeconds(float64(ops)/rate), MaxDuration)
	}
	return nil
}

// zeroIsNoValue are the fields whose 0 is no value, with what leaving the
// field out gives: a file's 0 read as "unset" and took that default, while
// the flag refused it. Zero is a value of the others (batch: one by one,
// rate: a closed loop, warmup: none), and of every field that is a pointer
// (expired_reads, reap_max_batches, rtt).
var zeroIsNoValue = map[string]string{
	"repeat":         "the default, 1",
	"client_threads": "the default, one thread per CPU the client may use",
	"clients":        "the default",
	"create_clients": "the default",
	"pipeline":       "the default, 1 (one op per round trip)",
	"ops":            "the default",
	"keys":           "the default",
	"keyspace":       "the default",
	"value_size":     "the default",
}

// RefuseZero is the check of a field (or its flag, name) whose value was
// written out as 0: refused where 0 is no value, with the bound and what
// leaving it out gives, in a file and on the command line alike. A
// duration of 0s is no timed phase: instead says what leaving it out runs.
func RefuseZero(name, field, instead string) error {
	if field == "duration" {
		return fmt.Errorf("%s 0s: a timed phase of no time measures nothing; omit it for %s", name, instead)
	}
	if def, ok := zeroIsNoValue[field]; ok {
		return fmt.Errorf("%s must be at least 1; omit it for %s", name, def)
	}
	return nil
}

// within checks lo (0 or 1) <= n <= hi; above hi, it says why.
func within(field string, n, lo, hi int64, unit, why string) error {
	switch {
	case n < lo && lo > 0:
		return fmt.Errorf("%s must be positive, got %d", field, n)
	case n < lo:
		return fmt.Errorf("%s must not be negative, got %d", field, n)
	case n > hi:
		return fmt.Errorf("%s %d: at most %d%s: %s", field, n, hi, unit, why)
	}
	return nil
}

// ParseCounts reads "1000,10k,1M"; workload.CheckKeys bounds the counts.
func ParseCounts(s string) ([]int64, error) {
	var out []int64
	for _, count := range strings.Split(s, ",") {
		p := strings.TrimSpace(count)
		mult := int64(1)
		switch {
		case strings.HasSuffix(p, "k"), strings.HasSuffix(p, "K"):
			mult, p = 1000, p[:len(p)-1]
		case strings.HasSuffix(p, "M"), strings.HasSuffix(p, "m"):
			mult, p = 1000000, p[:len(p)-1]
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(p, "_", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a count", p)
		}
		if n > math.MaxInt64/mult || n < math.MinInt64/mult {
			return nil, fmt.Errorf("%q is more than a count can hold", strings.TrimSpace(count))
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// Refuse is a Validate's answer: what it found wrong (nil errors passed
// over) under the workload's name, or nil when nothing is.
func Refuse(workload string, errs ...error) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", workload, err)
	}
	return nil
}
