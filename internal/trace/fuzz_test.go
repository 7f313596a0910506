package trace_test

import (
	"bytes"
	"testing"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
)

// FuzzReader: any input, in any format or detected, is read to its end or
// to an error, never a panic, and every request it gives has a known op
// and its keys.
func FuzzReader(f *testing.F) {
	for _, s := range []struct {
		format trace.Format
		cfg    tracegen.Config
	}{
		{trace.Twitter, tracegen.Config{}}, {trace.KVCache, tracegen.Config{}}, {trace.KVCache, tracegen.Config{KVCacheV1: true}},
		{trace.RedisMonitor, tracegen.Config{BinaryKeys: true}}, {trace.CSV, tracegen.Config{BinaryKeys: true}},
	} {
		var buf bytes.Buffer
		s.cfg.Requests, s.cfg.Seconds = 20, 2
		if _, err := tracegen.Write(&buf, s.format, s.cfg); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), uint8(0))
	}
	f.Add([]byte("key,op,size,key\n1,GET,3\n"), uint8(2))
	f.Add([]byte("1700000000.000001 [0 lua] \"GET\" \"\\x"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, format uint8) {
		var fm trace.Format
		if i := int(format) % (len(trace.Formats) + 1); i > 0 {
			fm = trace.Formats[i-1]
		}
		r, err := trace.NewReader(bytes.NewReader(in), "fuzz", fm)
		if err != nil {
			return
		}
		for range 100000 {
			q, err := r.Next()
			if err != nil {
				return
			}
			if q.Op >= trace.NumOps || q.Op != trace.OpNone && len(q.Keys) == 0 {
				t.Fatalf("request %+v", q)
			}
		}
	})
}
