// Package tracegen writes small synthetic traces in every format package
// trace reads: zipfian key popularity, a rate that rises and falls, TTLs
// on some sets, and a few commands no key-value store has. The tests and
// the replay suite use them (scripts/gentrace writes them to files), so
// nothing is downloaded.
package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/trace"
)

// Config is a trace to generate.
type Config struct {
	// Requests is how many lines carry a request (kvcache's op_count
	// expands some into more: Stats.Requests counts them).
	Requests int
	// Seconds the trace spans; its rate rises to the middle and falls.
	Seconds int
	// Keys is how many distinct keys, drawn zipfian (s = 1.1).
	Keys    int
	Clients int
	Seed    uint64
	// KVCacheV1 writes kvcache's v1 columns (no times) instead of v2's.
	KVCacheV1 bool
	// Flat spreads the requests evenly over the seconds (a constant rate)
	// instead of rising and falling.
	Flat bool
	// BinaryKeys puts bytes that need quoting into some MONITOR and CSV
	// keys (a quote, a backslash, a space, a newline, 0x00, 0xff).
	BinaryKeys bool
}

// Defaults are the sample traces' sizes.
func (c Config) withDefaults() Config {
	if c.Requests == 0 {
		c.Requests = 2000
	}
	if c.Seconds == 0 {
		c.Seconds = 4
	}
	if c.Keys == 0 {
		c.Keys = 200
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Seed == 0 {
		c.Seed = 42
	}
	return c
}

// Stats are what the generator wrote: the expanded requests and the
// unsupported ones by command, for a test to compare a replay with.
type Stats struct {
	Requests    int64
	Unsupported map[string]int64
	// ByOp counts the supported requests by trace.Op name.
	ByOp map[string]int64
	// Lines are the lines written, the header and MONITOR's OK included.
	Lines int64
}

// event is one generated request.
type event struct {
	us     int64 // time, µs from the start
	op     string
	key    int
	size   int
	ttl    int
	client int
	count  int // kvcache's op_count
}

// opMix are the generated ops by weight: mostly gets, some sets, a few of
// the others and unsupported ones (named per format by the writer).
var opMix = []struct {
	op string
	w  int
}{{"get", 70}, {"set", 20}, {"delete", 3}, {"incr", 2}, {"mget", 2}, {"unsupported", 3}}

// events calls fn with each request in time order, generated a second at
// a time, so a trace of any size is written in bounded memory.
func events(c Config, fn func(e event)) {
	r := rand.New(rand.NewPCG(c.Seed, 0x7ace))
	zipf := rand.NewZipf(r, 1.1, 1, uint64(c.Keys-1))
	// A rising and falling rate: second s gets a share of the requests
	// proportional to 1 + 3 sin(π (s+0.5)/S); Flat: the same share.
	weights := make([]float64, c.Seconds)
	sum := 0.0
	for s := range weights {
		weights[s] = 1 + 3*math.Sin(math.Pi*(float64(s)+0.5)/float64(c.Seconds))
		if c.Flat {
			weights[s] = 1
		}
		sum += weights[s]
	}
	total := 0
	var times []int64
	for s := range c.Seconds {
		n := int(math.Round(float64(c.Requests) * weights[s] / sum))
		if s == c.Seconds-1 {
			n = c.Requests - total
		}
		total += n
		times = times[:0]
		for range n {
			times = append(times, int64(s)*1e6+r.Int64N(1e6))
		}
		slices.Sort(times)
		for _, us := range times {
			e := event{us: us, key: int(zipf.Uint64()), client: r.IntN(c.Clients), count: 1}
			w := r.IntN(100)
			for _, m := range opMix {
				if w < m.w {
					e.op = m.op
					break
				}
				w -= m.w
			}
			e.size = 16 + int(hash(uint64(e.key))%200) // a key's values keep their size
			if e.op == "set" && r.IntN(4) == 0 {
				e.ttl = 1 + r.IntN(3600)
			}
			if e.op == "get" && r.IntN(20) == 0 {
				e.count = 3
			}
			fn(e)
		}
	}
}

func hash(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

// keyName is key i as a trace names it; with binary, some keys hold bytes
// that need quoting.
func keyName(i int, binary bool) string {
	if binary && i%7 == 3 {
		return fmt.Sprintf("bin\"\\ \n\x00\xff:%d", i)
	}
	return "key:" + strconv.Itoa(i)
}

// keySize is key i's recorded size in the anonymized formats.
func keySize(i int) int { return 10 + int(hash(uint64(i)+7)%40) }

// Write writes a trace of format f.
func Write(w io.Writer, f trace.Format, c Config) (Stats, error) {
	c = c.withDefaults()
	bw := bufio.NewWriter(w)
	st := Stats{Unsupported: map[string]int64{}, ByOp: map[string]int64{}}
	line := func(format string, a ...any) {
		fmt.Fprintf(bw, format+"\n", a...)
		st.Lines++
	}
	count := func(op trace.Op, cmd string, n int) {
		st.Requests += int64(n)
		if op == trace.OpNone {
			st.Unsupported[cmd] += int64(n)
		} else {
			st.ByOp[op.String()] += int64(n)
		}
	}
	switch f {
	case trace.Twitter:
		cmds := map[string]string{"get": "get", "set": "set", "delete": "delete", "incr": "incr", "mget": "gets", "unsupported": "gat"}
		events(c, func(e event) {
			cmd := cmds[e.op]
			line("%d,%s,%d,%d,%d,%s,%d", e.us/1e6, anonKey(e.key), keySize(e.key), e.size, e.client, cmd, e.ttl)
			count(genOp(e.op), cmd, 1)
		})
	case trace.KVCache:
		cmds := map[string]string{"get": "GET", "set": "SET", "delete": "DELETE", "incr": "GET_LEASE", "mget": "SET_LEASE", "unsupported": "SCAN"}
		ops := map[string]trace.Op{"get": trace.OpGet, "set": trace.OpSet, "delete": trace.OpDelete, "incr": trace.OpGet, "mget": trace.OpSet}
		if c.KVCacheV1 {
			line("key,op,size,op_count,key_size,ttl")
		} else {
			line("op_time,key,key_size,op,op_count,size,cache_hits,ttl")
		}
		events(c, func(e event) {
			cmd := cmds[e.op]
			if c.KVCacheV1 {
				line("%s,%s,%d,%d,%d,%d", anonKey(e.key), cmd, e.size, e.count, keySize(e.key), e.ttl)
			} else {
				line("%d,%s,%d,%s,%d,%d,%d,%d", 1700000000+e.us/1e6, anonKey(e.key), keySize(e.key), cmd, e.count, e.size, 0, e.ttl)
			}
			count(ops[e.op], strings.ToLower(cmd), e.count)
		})
	case trace.RedisMonitor:
		line("OK")
		i := -1
		events(c, func(e event) {
			i++
			k := Quote([]byte(keyName(e.key, c.BinaryKeys)))
			at := fmt.Sprintf("%d.%06d [0 127.0.0.1:%d]", 1700000000+e.us/1e6, e.us%1e6, 40000+e.client)
			switch e.op {
			case "get":
				line(`%s "GET" %s`, at, k)
				count(trace.OpGet, "get", 1)
			case "set":
				v := Quote(value(e.size, e.key))
				switch {
				case e.ttl > 0 && i%2 == 0:
					line(`%s "SETEX" %s "%d" %s`, at, k, e.ttl, v)
				case e.ttl > 0:
					line(`%s "SET" %s %s "PX" "%d"`, at, k, v, e.ttl*1000)
				default:
					line(`%s "SET" %s %s`, at, k, v)
				}
				count(trace.OpSet, "set", 1)
			case "delete":
				line(`%s "DEL" %s`, at, k)
				count(trace.OpDelete, "del", 1)
			case "incr":
				line(`%s "INCR" %s`, at, Quote([]byte("counter:"+strconv.Itoa(e.key%5))))
				count(trace.OpRMW, "incr", 1)
			case "mget":
				line(`%s "MGET" %s %s`, at, k, Quote([]byte(keyName(e.key+1, c.BinaryKeys))))
				count(trace.OpGet, "mget", 1)
			case "unsupported":
				if i%2 == 0 {
					line(`%s "PING"`, at)
					count(trace.OpNone, "ping", 1)
				} else {
					line(`%s "HSET" %s "f" "v"`, at, k)
					count(trace.OpNone, "hset", 1)
				}
			}
		})
	case trace.CSV:
		line("time_us,op,key,value_size,ttl_s,client")
		cmds := map[string]string{"get": "get", "set": "set", "delete": "delete", "incr": "incr", "mget": "get", "unsupported": "scan"}
		events(c, func(e event) {
			cmd := cmds[e.op]
			k := keyName(e.key, c.BinaryKeys)
			if strings.ContainsAny(k, ",\n\r") || !isText(k) {
				k = "hex:" + fmt.Sprintf("%x", k)
			}
			line("%d,%s,%s,%d,%d,client-%d", e.us, cmd, k, e.size, e.ttl, e.client)
			count(genOp(e.op), cmd, 1)
		})
	default:
		return st, fmt.Errorf("tracegen: unknown format %q", f)
	}
	return st, bw.Flush()
}

// genOp is what a generated op is on a store, where the format's command
// for it maps to one op.
func genOp(op string) trace.Op {
	switch op {
	case "get", "mget":
		return trace.OpGet
	case "set":
		return trace.OpSet
	case "delete":
		return trace.OpDelete
	case "incr":
		return trace.OpRMW
	}
	return trace.OpNone
}

func isText(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// anonKey is key i anonymized, as the public traces name keys.
func anonKey(i int) string { return fmt.Sprintf("%x", hash(uint64(i)+1)) }

// value is a value of n bytes for key k, with a byte that needs quoting
// now and then.
func value(n, k int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = 'a' + byte((i+k)%26)
	}
	if k%11 == 0 && n > 2 {
		v[1], v[2] = '"', 0x01
	}
	return v
}

// Quote quotes b as Redis's MONITOR does (sdscatrepr).
func Quote(b []byte) string {
	var s strings.Builder
	s.WriteByte('"')
	for _, c := range b {
		switch c {
		case '\\', '"':
			s.WriteByte('\\')
			s.WriteByte(c)
		case '\n':
			s.WriteString(`\n`)
		case '\r':
			s.WriteString(`\r`)
		case '\t':
			s.WriteString(`\t`)
		case '\a':
			s.WriteString(`\a`)
		case '\b':
			s.WriteString(`\b`)
		default:
			if c >= 0x20 && c <= 0x7e {
				s.WriteByte(c)
			} else {
				fmt.Fprintf(&s, `\x%02x`, c)
			}
		}
	}
	s.WriteByte('"')
	return s.String()
}
