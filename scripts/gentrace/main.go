// Command gentrace writes the sample traces of the replay workload: small
// synthetic traces in every format internal/trace reads (zipfian keys, a
// rate that rises and falls, TTLs, a few unsupported commands), made by
// internal/trace/tracegen, the generator the tests use.
//
//	go run ./scripts/gentrace -dir DIR [-requests N] [-seconds S] [-gzip]
//
// writes DIR/twitter.csv, kvcache-v1.csv, kvcache-v2.csv, monitor.txt and
// storebench.csv (each .gz with -gzip).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
)

func main() {
	dir := flag.String("dir", ".", "directory to write the traces into")
	requests := flag.Int("requests", 2000, "requests per trace")
	seconds := flag.Int("seconds", 4, "seconds each trace spans")
	seed := flag.Uint64("seed", 42, "seed")
	gz := flag.Bool("gzip", false, "gzip each trace (.gz)")
	flag.Parse()
	if err := write(*dir, tracegen.Config{Requests: *requests, Seconds: *seconds, Seed: *seed}, *gz); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}

func write(dir string, c tracegen.Config, gz bool) error {
	v1 := c
	v1.KVCacheV1 = true
	for _, t := range []struct {
		name string
		f    trace.Format
		c    tracegen.Config
	}{
		{"twitter.csv", trace.Twitter, c}, {"kvcache-v1.csv", trace.KVCache, v1}, {"kvcache-v2.csv", trace.KVCache, c},
		{"monitor.txt", trace.RedisMonitor, c}, {"storebench.csv", trace.CSV, c},
	} {
		name := filepath.Join(dir, t.name)
		if gz {
			name += ".gz"
		}
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		var w io.Writer = f
		var zw *gzip.Writer
		if gz {
			zw = gzip.NewWriter(f)
			w = zw
		}
		st, err := tracegen.Write(w, t.f, t.c)
		if err == nil && zw != nil {
			err = zw.Close()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("%s: %d requests, unsupported %v\n", name, st.Requests, st.Unsupported)
	}
	return nil
}
