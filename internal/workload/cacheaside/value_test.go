package cacheaside

import (
	"bytes"
	"testing"
)

// FuzzParseValue: whatever bytes a cache or database returns, parseValue
// never panics, and it accepts only what appendValue makes of the header it
// read back, byte for byte.
func FuzzParseValue(f *testing.F) {
	good := appendValue(nil, 42, 7, header{version: 3, expiry: 1e18, delta: 1234, fillGen: 9, fillSize: 64})
	f.Add(good, uint64(42), int64(7), 64)
	f.Add(good[:40], uint64(42), int64(7), 64)         // truncated
	f.Add(good[:headerSize], uint64(42), int64(7), 32) // header only, wrong length
	f.Add([]byte{}, uint64(0), int64(0), 32)           // empty
	f.Add(bytes.Repeat([]byte{0xff}, 64), uint64(1), int64(-1), 64)
	f.Add(good, uint64(43), int64(7), 64) // another seed's filler
	f.Fuzz(func(t *testing.T, val []byte, seed uint64, i int64, size int) {
		if size < MinValueSize || size > 1<<16 {
			return // Validate refuses these sizes before any read
		}
		h, _, err := parseValue([]byte("k"), val, seed, i, size, nil)
		if err != nil {
			return
		}
		if again := appendValue(nil, seed, i, h); !bytes.Equal(again, val) {
			t.Fatalf("accepted %q, which is not the value of its own header %+v (%q)", val, h, again)
		}
	})
}

// TestValueRoundTrip: a value parses back to its header, and a row
// restamped for the cache keeps its version and filler.
func TestValueRoundTrip(t *testing.T) {
	h := header{version: 5, expiry: 123, delta: 456, fillGen: 7, fillSize: 100}
	v := appendValue(nil, 1, 2, h)
	got, _, err := parseValue([]byte("k"), v, 1, 2, 100, nil)
	if err != nil || got != h {
		t.Fatalf("parsed %+v, %v; want %+v", got, err, h)
	}
	restamp(v, 9, 8, 3)
	got, _, err = parseValue([]byte("k"), v, 1, 2, 100, nil)
	if want := (header{version: 5, expiry: 9, delta: 8, fillGen: 3, fillSize: 100}); err != nil || got != want {
		t.Fatalf("restamped: %+v, %v; want %+v", got, err, want)
	}
	if _, _, err := parseValue([]byte("k"), v, 1, 3, 100, nil); err == nil {
		t.Error("another key's filler was accepted")
	}
}
