package redis

import (
	"encoding/binary"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// scanOrder is what a scan orders keys by: their score in the index, as
// bytes that sort as the signed score does.
func scanOrder(key []byte) string {
	return string(binary.BigEndian.AppendUint32(nil, uint32(javaHash(key))^1<<31))
}

// TestRecords runs the records conformance on Redis and on Valkey.
func TestRecords(t *testing.T) {
	for _, kind := range []server.Kind{server.Redis, server.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			url := servertest.Start(t, kind, server.Options{Profile: "none"}).URL
			storetest.RunRecords(t, func(t *testing.T) store.Store { return open(t, url) }, scanOrder)
		})
	}
}

// TestJavaHash: the scores are Java's String.hashCode, as YCSB's binding
// indexes keys (Java's known values: "hello", and a string whose hash
// overflows to the least int).
func TestJavaHash(t *testing.T) {
	for key, want := range map[string]int32{"": 0, "a": 97, "hello": 99162322, "polygenelubricants": -1 << 31} {
		if got := javaHash([]byte(key)); got != want {
			t.Errorf("javaHash(%q) = %d, want %d", key, got, want)
		}
	}
}
