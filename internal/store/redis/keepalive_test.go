package redis

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestNoBackgroundWriterBesideRawBatches: pipelined batches are written
// and read beside rueidis on its connection (batch.go), which is safe only
// while rueidis itself never writes on that connection unasked. Its one
// background writer is the keepalive PING, sent when the connection has
// received nothing through rueidis for Dialer.KeepAlive (default 1 s) —
// which is all the time while only raw batches run. With it, a PING lands
// between a batch's writes and its reply is read as a value. So: raw
// batches for three default ping gaps, every value checked, and the
// server's PING count unchanged.
func TestNoBackgroundWriterBesideRawBatches(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{}).URL
	ctx := context.Background()
	info := pingCounter(t, url)
	s := open(t, url)
	kv, b := storetest.BatchClient(t, s)
	keys := make([][]byte, 16)
	vals := make([][]byte, 16)
	for i := range keys {
		keys[i] = []byte("ka" + strconv.Itoa(i))
		vals[i] = []byte("va" + strconv.Itoa(i))
	}
	if err := b.SetBatch(ctx, keys, vals, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Get(ctx, keys[0], nil); err != nil { // one command through rueidis: its ping timer now counts from here
		t.Fatal(err)
	}
	before := info()
	found := make([]bool, len(keys))
	dst := make([][]byte, len(keys))
	batches := 0
	for end := time.Now().Add(3 * rueidis.DefaultTCPKeepAlive); time.Now().Before(end); batches++ {
		got, err := b.GetBatch(ctx, keys, dst[:0], found)
		if err != nil {
			t.Fatalf("batch %d: %v", batches, err)
		}
		for i := range keys {
			if !found[i] || !bytes.Equal(got[i], vals[i]) {
				t.Fatalf("batch %d: key %s read %q (found %v), want %q", batches, keys[i], got[i], found[i], vals[i])
			}
		}
		dst = got
		time.Sleep(time.Millisecond)
	}
	if after := info(); after != before {
		t.Errorf("the server received %d PINGs during %d raw batches: a background writer shares the batches' connection", after-before, batches)
	}
}

// pingCounter reads how many PINGs the server has received, through a
// client that sends none of its own.
func pingCounter(t *testing.T, url string) func() int64 {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	opt.Dialer.KeepAlive = -1
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return func() int64 {
		text, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_ping:calls="); ok {
				n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				return n
			}
		}
		return 0
	}
}
