package trace

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// splitFields splits a CSV line at its commas (the traces quote nothing)
// into out.
func splitFields(line []byte, out [][]byte) [][]byte {
	out = out[:0]
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(out, line)
		}
		out = append(out, line[:i])
		line = line[i+1:]
	}
}

// origin makes times relative to a trace's first request.
type origin struct {
	set bool
	t0  int64
}

func (o *origin) rel(t int64) int64 {
	if !o.set {
		o.set, o.t0 = true, t
	}
	return t - o.t0
}

// ttlSeconds is a TTL field in seconds; 0 or empty: none.
func ttlSeconds(b []byte) (time.Duration, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := parseInt(b)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("ttl %q: want seconds, 0 for none", b)
	}
	return time.Duration(n) * time.Second, nil
}

func size(field string, b []byte) (int, error) {
	n, err := parseInt(b)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("%s %q: want bytes, 0 to 1 GiB", field, b)
	}
	return int(n), nil
}

// twitterOps map Twitter's (twemcache's) commands; add, replace and cas
// write as a set does, append and prepend and incr and decr read and write.
var twitterOps = map[string]struct {
	op     Op
	change Change
	delta  int64
}{
	"get": {op: OpGet}, "gets": {op: OpGet},
	"set": {op: OpSet}, "add": {op: OpSet}, "replace": {op: OpSet}, "cas": {op: OpSet},
	"append": {op: OpRMW, change: ChangeAppend}, "prepend": {op: OpRMW, change: ChangeAppend},
	"incr": {op: OpRMW, change: ChangeIncr, delta: 1}, "decr": {op: OpRMW, change: ChangeIncr, delta: -1},
	"delete": {op: OpDelete},
}

// twitterParser reads Twitter's cache traces
// (github.com/twitter/cache-trace): timestamp (s), anonymized key, key
// size, value size, client id, operation, TTL (s). The key may hold
// commas, so the other fields are taken from both ends.
type twitterParser struct {
	o      origin
	fields [][]byte
	key    []byte
}

func (*twitterParser) secondResolution() bool { return true }

func twitterLine(line []byte) bool {
	f := splitFields(line, nil)
	if len(f) < 7 {
		return false
	}
	_, err := parseInt(f[0])
	_, known := twitterOps[string(f[len(f)-2])]
	return err == nil && known
}

func (p *twitterParser) parse(line []byte, _ int64, out []Request) ([]Request, error) {
	p.fields = splitFields(line, p.fields)
	f := p.fields
	if len(f) < 7 {
		return out, fmt.Errorf("%d fields, want 7: timestamp,key,key_size,value_size,client_id,op,ttl", len(f))
	}
	n := len(f)
	ts, err := parseInt(f[0])
	if err != nil || ts < 0 {
		return out, fmt.Errorf("timestamp %q: want whole seconds", f[0])
	}
	anon := line[len(f[0])+1 : len(line)-len(f[n-1])-len(f[n-2])-len(f[n-3])-len(f[n-4])-len(f[n-5])-5]
	keySize, err := size("key size", f[n-5])
	if err != nil {
		return out, err
	}
	valSize, err := size("value size", f[n-4])
	if err != nil {
		return out, err
	}
	ttl, err := ttlSeconds(f[n-1])
	if err != nil {
		return out, err
	}
	cmd := string(f[n-2])
	if cmd == "" {
		return out, errors.New("no operation")
	}
	p.key = MapKey(p.key[:0], anon, keySize)
	q := Request{
		At: time.Duration(p.o.rel(ts)) * time.Second, Cmd: cmd, Keys: [][]byte{p.key},
		ValueSize: valSize, TTL: ttl, Client: clientID(f[n-3]),
	}
	if m, ok := twitterOps[cmd]; ok {
		q.Op, q.Change, q.Delta = m.op, m.change, m.delta
	}
	return append(out, q), nil
}

// kvcacheOps map the ops of Meta's kvcache traces: the lease forms as
// their plain ones, as CacheLib's replay does.
var kvcacheOps = map[string]Op{
	"GET": OpGet, "GET_LEASE": OpGet, "SET": OpSet, "SET_LEASE": OpSet, "DELETE": OpDelete,
}

// kvcacheParser reads Meta's kvcache traces as CacheLib's KVReplayGenerator
// does: a header line names the columns, v1
// key,op,size,op_count,key_size[,ttl] and v2
// op_time,key,key_size,op,op_count,size,cache_hits,ttl; op_count expands a
// line into that many requests. op_time is in seconds; v1 has no times.
type kvcacheParser struct {
	cols               map[string]int
	key, op, size, ttl int
	count, keySize     int
	time               int
	o                  origin
	fields             [][]byte
	kbuf               []byte
}

func (*kvcacheParser) secondResolution() bool { return true }

func kvcacheHeader(line []byte) bool {
	f := splitFields(line, nil)
	has := map[string]bool{}
	for _, c := range f {
		has[strings.TrimSpace(string(c))] = true
	}
	return has["key"] && has["op"] && has["size"]
}

func (p *kvcacheParser) parse(line []byte, _ int64, out []Request) ([]Request, error) {
	p.fields = splitFields(line, p.fields)
	f := p.fields
	if p.cols == nil {
		if !kvcacheHeader(line) {
			return out, errors.New("a kvcache trace begins with its header line (key,op,size,… or op_time,key,…), as CacheLib reads it")
		}
		p.cols = map[string]int{}
		for i, c := range f {
			p.cols[strings.TrimSpace(string(c))] = i
		}
		col := func(name string) int {
			if i, ok := p.cols[name]; ok {
				return i
			}
			return -1
		}
		p.key, p.op, p.size, p.ttl = col("key"), col("op"), col("size"), col("ttl")
		p.count, p.keySize, p.time = col("op_count"), col("key_size"), col("op_time")
		return out, nil
	}
	if len(f) < len(p.cols) && !(p.ttl == len(p.cols)-1 && len(f) == len(p.cols)-1) {
		return out, fmt.Errorf("%d fields, want %d as the header names", len(f), len(p.cols))
	}
	field := func(i int) []byte {
		if i < 0 || i >= len(f) {
			return nil
		}
		return f[i]
	}
	if field(p.key) == nil || field(p.op) == nil || field(p.size) == nil {
		return out, fmt.Errorf("%d fields: no key, op or size where the header names them", len(f))
	}
	valSize, err := size("size", f[p.size])
	if err != nil {
		return out, err
	}
	keySize := 0
	if b := field(p.keySize); b != nil {
		if keySize, err = size("key_size", b); err != nil {
			return out, err
		}
	}
	count := int64(1)
	if b := field(p.count); b != nil {
		if count, err = parseInt(b); err != nil || count < 1 || count > 1<<30 {
			return out, fmt.Errorf("op_count %q: want 1 to %d", b, 1<<30)
		}
	}
	ttl, err := ttlSeconds(field(p.ttl))
	if err != nil {
		return out, err
	}
	at := Untimed
	if b := field(p.time); b != nil {
		t, err := parseInt(b)
		if err != nil || t < 0 {
			return out, fmt.Errorf("op_time %q: want whole seconds", b)
		}
		at = time.Duration(p.o.rel(t)) * time.Second
	}
	cmd := strings.ToLower(string(f[p.op]))
	if cmd == "" {
		return out, errors.New("no op")
	}
	p.kbuf = MapKey(p.kbuf[:0], f[p.key], keySize)
	q := Request{At: at, Op: kvcacheOps[string(f[p.op])], Cmd: cmd, Keys: [][]byte{p.kbuf}, ValueSize: valSize, TTL: ttl, Client: hash64(p.kbuf), count: count}
	return append(out, q), nil
}

// csvOps are storebench's CSV ops.
var csvOps = map[string]struct {
	op     Op
	change Change
	delta  int64
}{
	"get": {op: OpGet}, "set": {op: OpSet}, "delete": {op: OpDelete},
	"incr": {op: OpRMW, change: ChangeIncr, delta: 1}, "decr": {op: OpRMW, change: ChangeIncr, delta: -1},
	"append": {op: OpRMW, change: ChangeAppend}, "expire": {op: OpRMW, change: ChangeTTL},
}

// csvParser reads storebench's own CSV: a header line
// time_us,op,key,value_size,ttl_s[,client], then one request a line; a key
// written hex:… is hex-decoded (a key with a comma or a byte that is not
// text).
type csvParser struct {
	header bool
	client bool
	o      origin
	fields [][]byte
	kbuf   []byte
}

func (*csvParser) secondResolution() bool { return false }

func (p *csvParser) parse(line []byte, _ int64, out []Request) ([]Request, error) {
	p.fields = splitFields(line, p.fields)
	f := p.fields
	if !p.header {
		switch string(line) {
		case "time_us,op,key,value_size,ttl_s":
		case "time_us,op,key,value_size,ttl_s,client":
			p.client = true
		default:
			return out, errors.New("want the header line time_us,op,key,value_size,ttl_s[,client]")
		}
		p.header = true
		return out, nil
	}
	want := 5
	if p.client {
		want = 6
	}
	if len(f) != want {
		return out, fmt.Errorf("%d fields, want %d as the header names", len(f), want)
	}
	t, err := parseInt(f[0])
	if err != nil || t < 0 {
		return out, fmt.Errorf("time_us %q: want whole microseconds", f[0])
	}
	valSize, err := size("value_size", f[3])
	if err != nil {
		return out, err
	}
	ttl, err := ttlSeconds(f[4])
	if err != nil {
		return out, err
	}
	key := f[2]
	if rest, ok := bytes.CutPrefix(key, []byte("hex:")); ok {
		p.kbuf = p.kbuf[:0]
		if p.kbuf, err = hex.AppendDecode(p.kbuf, rest); err != nil {
			return out, fmt.Errorf("key %q: %v", key, err)
		}
		key = p.kbuf
	}
	if len(key) == 0 {
		return out, errors.New("an empty key")
	}
	cmd := string(f[1])
	if cmd == "" {
		return out, errors.New("no op")
	}
	q := Request{At: time.Duration(p.o.rel(t)) * time.Microsecond, Cmd: cmd, Keys: [][]byte{key}, ValueSize: valSize, TTL: ttl}
	if m, ok := csvOps[cmd]; ok {
		q.Op, q.Change, q.Delta = m.op, m.change, m.delta
	}
	q.Client = hash64(key)
	if p.client {
		q.Client = clientID(f[5])
	}
	return append(out, q), nil
}
