package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds a shard count: more client processes than this is a
// cluster scheduler's job, and each merged shard's histograms (~200 KiB per
// phase) must fit in one merge process.
const MaxShards = 1024

// Shard is one of Count equal parts of a run (run --shard Index/Count),
// numbered from 0, as a Kubernetes Indexed Job numbers its pods (the
// completion index). The zero Shard is the whole run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole reports whether s is the whole run (no --shard).
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "I/N", 0 <= I < N <= MaxShards.
func ParseShard(text string) (Shard, error) {
	i, n, ok := strings.Cut(text, "/")
	index, errI := strconv.Atoi(strings.TrimSpace(i))
	count, errN := strconv.Atoi(strings.TrimSpace(n))
	if !ok || errI != nil || errN != nil {
		return Shard{}, fmt.Errorf("%q: want I/N, e.g. 0/3 for the first of three shards", text)
	}
	s := Shard{Index: index, Count: count}
	return s, s.check() // "0/0" is no shard, though the zero Shard is the whole run
}

// Validate checks 0 <= Index < Count <= MaxShards; the zero Shard is valid.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	return s.check()
}

func (s Shard) check() error {
	if s.Count < 1 || s.Count > MaxShards {
		return fmt.Errorf("%s: N must be 1 to %d (a merge holds every shard's histograms in memory)", s, MaxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%s: I must be 0 to %d (shards count from 0, as a Kubernetes Indexed Job's completion index)", s, s.Count-1)
	}
	return nil
}

// Range is this shard's part of total items numbered 0..total-1: the
// first item and how many. The parts are contiguous, disjoint and cover
// total; they differ by at most one, the remainder going to the first
// shards.
func (s Shard) Range(total int64) (first, n int64) {
	if s.Whole() {
		return 0, total
	}
	count, index := int64(s.Count), int64(s.Index)
	q, r := total/count, total%count
	return index*q + min(index, r), q + boolInt(index < r)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Share is this shard's part of the load: its clients, its ops and warm-up
// ops (Range's split) and its part of an open-loop rate (an exact N-th, so
// the shards' rates add up to the whole). Durations are every shard's. A
// share without a client is an error: the load is too small to split so.
func (l Load) Share(s Shard) (Load, error) {
	if s.Whole() {
		return l, nil
	}
	whole := l
	_, clients := s.Range(int64(whole.Clients))
	l.Clients = int(clients)
	_, l.Ops = s.Range(whole.Ops)
	_, l.WarmupOps = s.Range(whole.WarmupOps)
	l.Rate = whole.Rate / float64(s.Count)
	if l.Clients < 1 {
		return Load{}, fmt.Errorf("shard %s: the load has %d clients, fewer than %d shards: each shard needs one", s, whole.Clients, s.Count)
	}
	if whole.Ops > 0 && l.Ops < 1 {
		return Load{}, fmt.Errorf("shard %s: the load has %d ops, fewer than %d shards: each shard needs one", s, whole.Ops, s.Count)
	}
	return l, nil
}

// Part is a cell's place in a sharded run: its shard, and its workers'
// numbers among the whole run's, so that the shards' workers draw the very
// key and op streams the workers of one unsharded run would (worker n of
// the whole run is worker n of exactly one shard).
type Part struct {
	Shard
	FirstWorker int `json:"first_worker"` // the number of the shard's first worker in the whole run
	Workers     int `json:"workers"`      // the whole run's workers
}

// Part is the shard's place among whole's clients; the zero Part for the
// whole run.
func (s Shard) Part(whole Load) Part {
	if s.Whole() {
		return Part{}
	}
	first, _ := s.Range(int64(whole.Clients))
	return Part{Shard: s, FirstWorker: int(first), Workers: whole.Clients}
}

// Worker is the whole run's number of the shard's worker i, and the whole
// run's worker count (local when the run is whole).
func (p Part) Worker(i, local int) (n, of int) {
	if p.Whole() {
		return i, local
	}
	return p.FirstWorker + i, p.Workers
}

// WriteKey maps key i of [0, keys) into the shard's part of them
// (Shard.Range), so that shards write disjoint keys: the keys it writes
// keep their distribution's shape within the part, not its hot keys.
func (p Part) WriteKey(i, keys int64) int64 {
	if p.Whole() {
		return i
	}
	first, n := p.Range(keys)
	return first + i%max(n, 1)
}
