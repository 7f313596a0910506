package cacheaside

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/workload/replay"
)

// traceOp is one application request a trace asks for: row i, read or
// written.
type traceOp struct {
	i     int64
	write bool
}

// traceBatch is how many requests a worker takes from the trace at once,
// so the reader's lock is taken once per batch, not per request.
const traceBatch = 64

// traceSource hands the application's workers the requests of a recorded
// trace in its order, read again from its start when it ends (a phase
// lasts its own duration): gets read through the cache, every other kind
// (set, delete, read-modify-write) writes the row; each key of a request
// is one request. The trace's keys are hashed onto the rows [0, keys), so
// its popularity carries over (a few keys may share a row).
type traceSource struct {
	mu     sync.Mutex
	params replay.Params
	keys   int64
	r      *trace.Reader
	err    error
	// passes counts the trace's ends; ops the requests handed out in the
	// current pass, reads and writes of them all, skipped the requests no
	// row models, by command.
	passes             int
	ops, reads, writes int64
	skipped            map[string]int64
}

func newTraceSource(p replay.Params, keys int64) *traceSource {
	return &traceSource{params: p, keys: keys, skipped: map[string]int64{}}
}

// take fills buf (its capacity) with the trace's next requests.
func (s *traceSource) take(buf []traceOp) ([]traceOp, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf = buf[:0]
	for len(buf) < cap(buf) && s.err == nil {
		if s.r == nil {
			s.r, s.err = s.params.Open()
			continue
		}
		q, err := s.r.Next()
		if err == io.EOF {
			s.r.Close()
			s.r = nil
			if s.ops == 0 {
				s.err = errors.New("the trace has no get, set, delete or read-modify-write request")
			}
			s.passes++
			s.ops = 0
			continue
		}
		if err != nil {
			s.err = fmt.Errorf("trace %w", err)
			break
		}
		if q.Op == trace.OpNone {
			s.skipped[q.Cmd]++
			continue
		}
		for _, k := range q.Keys {
			op := traceOp{i: int64(fnv64a(k) % uint64(s.keys)), write: q.Op != trace.OpGet}
			buf = append(buf, op)
			s.ops++
			if op.write {
				s.writes++
			} else {
				s.reads++
			}
		}
	}
	return buf, s.err
}

// failed is the trace's error, if reading it failed.
func (s *traceSource) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close releases the reader.
func (s *traceSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
}

// note says what the trace drove, for the summary.
func (s *traceSource) note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := fmt.Sprintf("requests from the trace %s, in its order (read through %d times), at the entry's pace: %d gets read through the cache, %d sets, deletes and read-modify-writes wrote their row; its keys hashed onto %d rows; the entry's read_ratio and key_dist do not apply",
		s.params.Trace, s.passes+1, s.reads, s.writes, s.keys)
	if len(s.skipped) > 0 {
		var by []string
		for _, cmd := range slices.Sorted(maps.Keys(s.skipped)) {
			by = append(by, fmt.Sprintf("%s %d", cmd, s.skipped[cmd]))
		}
		text += "; requests no row models, skipped: " + strings.Join(by, ", ")
	}
	return text
}

// fnv64a is FNV-1a of b, without the allocation of hash/fnv's.
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
