// Package trace reads recorded key-value traffic, streamed, one request at
// a time, so a reader's memory does not grow with the trace: Twitter's
// cache-trace CSV, Meta's kvcache traces as CacheLib reads them (v1 and
// v2), the output of Redis MONITOR, and storebench's own CSV
// (docs/replay.md). A file may be gzip or zstd compressed (told by its
// first bytes); its format is told by its content when not given.
//
// Each request is mapped onto a key-value store's operations (Op) when
// the reader parses it, so every format's mapping is in one place: a
// command without such a meaning keeps its name (Request.Cmd, OpNone) for
// the replay to count, never dropped silently.
//
// The package knows no store and no workload: it is a leaf.
package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Format is a trace format's name, as --trace-format takes it.
type Format string

// The formats.
const (
	Twitter      Format = "twitter"
	KVCache      Format = "kvcache"
	RedisMonitor Format = "redis-monitor"
	CSV          Format = "csv"
)

// Formats are every format, in the order docs/replay.md lists them.
var Formats = []Format{Twitter, KVCache, RedisMonitor, CSV}

// ParseFormat checks a format's name; "" asks for detection.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	if s == "" {
		return "", nil
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown trace format %q (valid: %s)", s, strings.Join(names, ", "))
}

// Op is what a request does on a key-value store.
type Op uint8

// The ops a request maps to.
const (
	// OpNone: the command has no meaning on a key-value store (counted by
	// its name, Request.Cmd, and not sent).
	OpNone   Op = iota
	OpGet       // read each of Keys: a hit or a miss each
	OpSet       // write each of Keys, a value of ValueSize bytes, TTL
	OpDelete    // remove each of Keys
	// OpRMW reads Keys[0] and writes it back changed (Change), one
	// request: INCR, APPEND, GETSET, EXPIRE and the like.
	OpRMW
	NumOps
)

// OpNames are the ops' names, as figures per op kind are named.
var OpNames = [NumOps]string{OpNone: "unsupported", OpGet: "get", OpSet: "set", OpDelete: "delete", OpRMW: "rmw"}

func (o Op) String() string { return OpNames[o] }

// Change is how a read-modify-write request changes its key's value.
type Change uint8

// The changes.
const (
	// ChangeIncr adds Delta to the value read as a decimal integer (a
	// missing key counts as 0).
	ChangeIncr Change = iota
	// ChangeAppend appends ValueSize bytes (a missing key: ValueSize bytes).
	ChangeAppend
	// ChangeReplace writes a value of ValueSize bytes (GETSET).
	ChangeReplace
	// ChangeTTL writes the value back with TTL (EXPIRE), only when the key
	// is there.
	ChangeTTL
	// ChangeDelete deletes the key after the read (GETDEL).
	ChangeDelete
)

// Request is one recorded request, as a key-value store replays it.
type Request struct {
	// At is when it was sent, from the trace's first request; Untimed
	// (negative) in a format without times (kvcache v1).
	At time.Duration
	// Op is what it does; Cmd the command's name as recorded, lower case.
	Op  Op
	Cmd string
	// Keys it reads or writes: one, or several for MGET, MSET and DEL.
	Keys [][]byte
	// ValueSize is the size of the value a set writes (MSET: each).
	ValueSize int
	// TTL of what it writes; 0: none.
	TTL time.Duration
	// Change and Delta say what an OpRMW does.
	Change Change
	Delta  int64
	// Client is the recorded client's id, hashed; with none recorded, the
	// first key's, so requests of one key keep their order.
	Client uint64
	// Line is the request's line in the (uncompressed) trace.
	Line int64

	// count is how many times the line's request repeats (kvcache's
	// op_count), expanded one at a time by Next; spread, its first slot
	// of slots in its second (0 slots: not spread).
	count, slot, slots int64
}

// Untimed is Request.At in a trace without times.
const Untimed time.Duration = -1

// LineError is a line of a trace that does not parse.
type LineError struct {
	File string
	Line int64
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxLine is the longest line a reader takes: a MONITOR line holds the
// value it sets, quoted (up to 4 bytes a byte). A longer line is an error,
// so one line cannot take the client's memory.
const maxLine = 64 << 20

// parser turns lines of one format into requests: it appends the line's
// requests (op_count expands one into several) to out.
type parser interface {
	parse(line []byte, lineNo int64, out []Request) ([]Request, error)
	// secondResolution: its times are whole seconds, which the reader
	// spreads evenly over each second.
	secondResolution() bool
}

// Reader streams a trace's requests.
type Reader struct {
	name   string
	format Format
	file   io.Closer
	dec    io.Closer // the decompressor to close, if any
	br     *bufio.Reader
	p      parser
	line   int64
	buf    []byte // a line longer than the bufio buffer

	pending []Request // parsed, not yet returned
	next    int
	rep     int64   // repetitions of pending[next] returned
	out     Request // the request Next returned
	spread  *spreader
	done    bool
	err     error
	// Compression is "gzip", "zstd" or "".
	Compression string
}

// Open opens a trace file; format "" detects it from the first lines.
func Open(path string, format Format) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path, format)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads a trace from src, named name in errors.
func NewReader(src io.Reader, name string, format Format) (*Reader, error) {
	r := &Reader{name: name}
	br := bufio.NewReaderSize(src, 64<<10)
	magic, _ := br.Peek(4)
	var in io.Reader = br
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		in, r.dec, r.Compression = zr, zr, "gzip"
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		// One goroutine and a bounded window: the client's memory stays
		// small whatever the file's size.
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, fmt.Errorf("%s: zstd: %w", name, err)
		}
		in, r.dec, r.Compression = zr, zstdCloser{zr}, "zstd"
	}
	r.br = bufio.NewReaderSize(in, 256<<10)
	if format == "" {
		head, _ := r.br.Peek(16 << 10)
		f, err := Detect(head)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		format = f
	}
	r.format = format
	switch format {
	case Twitter:
		r.p = &twitterParser{}
	case KVCache:
		r.p = &kvcacheParser{}
	case RedisMonitor:
		r.p = &monitorParser{}
	case CSV:
		r.p = &csvParser{}
	default:
		r.Close()
		_, err := ParseFormat(string(format))
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r.p.secondResolution() {
		r.spread = &spreader{}
	}
	return r, nil
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// Format is the trace's format, given or detected.
func (r *Reader) Format() Format { return r.format }

// Spread says whether the trace's times are whole seconds, each second's
// requests spread evenly over it.
func (r *Reader) Spread() bool { return r.spread != nil }

// Close closes the file.
func (r *Reader) Close() error {
	if r.dec != nil {
		r.dec.Close()
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// Next returns the next request, valid until the following call, or
// io.EOF after the last; a line that does not parse is a *LineError. An
// error is sticky.
func (r *Reader) Next() (*Request, error) {
	for r.next >= len(r.pending) {
		if r.err != nil {
			return nil, r.err
		}
		if r.done {
			return nil, io.EOF
		}
		r.pending, r.next, r.rep = r.pending[:0], 0, 0
		if r.err = r.fill(); r.err != nil && len(r.pending) == 0 {
			return nil, r.err
		}
	}
	q := &r.pending[r.next]
	r.out = *q
	if q.slots > 0 { // spread: this repetition's slot of its second
		r.out.At += time.Duration(int64(time.Second) * (q.slot + r.rep) / q.slots)
	}
	r.rep++
	if r.rep >= max(q.count, 1) {
		r.next, r.rep = r.next+1, 0
	}
	return &r.out, nil
}

// fill parses lines into r.pending: one line's requests, or, spreading,
// one whole second's.
func (r *Reader) fill() error {
	for {
		line, err := r.readLine()
		if err == io.EOF {
			r.done = true
			if r.spread != nil {
				r.pending = r.spread.flush(r.pending)
			}
			return nil
		}
		if err != nil {
			return &LineError{File: r.name, Line: r.line, Err: err}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.spread == nil {
			r.pending, err = r.p.parse(line, r.line, r.pending)
			if err != nil {
				return &LineError{File: r.name, Line: r.line, Err: err}
			}
			if len(r.pending) > 0 {
				return nil
			}
			continue
		}
		r.spread.in, err = r.p.parse(line, r.line, r.spread.in[:0])
		if err != nil {
			r.pending = r.spread.flush(r.pending)
			return &LineError{File: r.name, Line: r.line, Err: err}
		}
		var ready bool
		if r.pending, ready, err = r.spread.add(r.pending); err != nil {
			return &LineError{File: r.name, Line: r.line, Err: err}
		}
		if ready {
			return nil
		}
	}
}

// readLine is the next line without its end, valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.line++
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.buf = append(r.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(r.buf) > maxLine {
				return nil, fmt.Errorf("a line longer than %d MiB", maxLine>>20)
			}
			line, err = r.br.ReadSlice('\n')
			r.buf = append(r.buf, line...)
		}
		line = r.buf
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("read: %w", err)
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// spreader holds one second's lines of a trace with whole-second times
// and spreads their requests (op_count expanded) evenly over their
// second: request i of n at second + i/n. Its memory is one second's
// lines.
type spreader struct {
	in     []Request // the last line's
	second []Request // the current second's
	slots  int64     // its requests, expanded
	at     time.Duration
}

// maxSecond bounds the lines of one second a reader holds (about 150
// bytes each).
const maxSecond = 1 << 20

// add takes the last line's requests; when they begin a new second, the
// previous one is spread into out and ready.
func (s *spreader) add(out []Request) ([]Request, bool, error) {
	if len(s.in) == 0 {
		return out, false, nil
	}
	at := s.in[0].At
	ready := false
	if at == Untimed { // nothing to spread (kvcache v1)
		out = s.flush(out)
		for _, q := range s.in {
			out = append(out, cloneRequest(q))
		}
		return out, true, nil
	}
	if len(s.second) > 0 && at != s.at {
		if at < s.at {
			return out, false, fmt.Errorf("time %v goes back before %v", at, s.at)
		}
		out = s.flush(out)
		ready = true
	}
	s.at = at
	for _, q := range s.in {
		q = cloneRequest(q)
		q.slot = s.slots
		s.slots += max(q.count, 1)
		s.second = append(s.second, q)
	}
	if len(s.second) > maxSecond {
		return out, ready, fmt.Errorf("more than %d lines in one second: too many to hold and spread over it", maxSecond)
	}
	return out, ready, nil
}

func (s *spreader) flush(out []Request) []Request {
	for _, q := range s.second {
		q.slots = s.slots
		out = append(out, q)
	}
	s.second, s.slots = s.second[:0], 0
	return out
}

// cloneRequest copies q's keys, which alias a parser's buffers.
func cloneRequest(q Request) Request {
	keys := make([][]byte, len(q.Keys))
	for i, k := range q.Keys {
		keys[i] = bytes.Clone(k)
	}
	q.Keys = keys
	return q
}

// Detect tells a trace's format from its first bytes (uncompressed).
func Detect(head []byte) (Format, error) {
	lines := bytes.Split(head, []byte("\n"))
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last may be cut short
	}
	for _, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		switch {
		case string(line) == "OK" || monitorLine(line):
			return RedisMonitor, nil
		case bytes.HasPrefix(line, []byte("time_us,")):
			return CSV, nil
		case kvcacheHeader(line):
			return KVCache, nil
		case twitterLine(line):
			return Twitter, nil
		}
		return "", fmt.Errorf("cannot tell the trace's format from its first line %.80q: give --trace-format (%s)", line, formatList())
	}
	return "", errors.New("the trace is empty")
}

func formatList() string {
	var names []string
	for _, f := range Formats {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Check reads the first lines of a trace (up to lines of them), so a
// corrupt head is refused before any work; it returns the format.
func Check(path string, format Format, lines int64) (Format, error) {
	r, err := Open(path, format)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.format, r.Check(lines)
}

// Check reads up to lines lines of r (which it consumes).
func (r *Reader) Check(lines int64) error {
	for r.line < lines {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}
