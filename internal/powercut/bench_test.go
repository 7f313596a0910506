package powercut

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The filesystem's own cost: each operation on the mount and on a plain
// directory of the same disk, in µs per op.

func benchDirs(b *testing.B) map[string]string {
	b.Helper()
	_, mp := mountT(b)
	return map[string]string{"mount": mp, "plain": b.TempDir()}
}

func reportMicros(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/op")
}

func BenchmarkWriteFsync4KiB(b *testing.B) { benchWrite(b, true) }

// BenchmarkWrite4KiB leaves the disk's fsync out: what remains is the
// filesystem's own cost per write (a FUSE round trip and the undo).
func BenchmarkWrite4KiB(b *testing.B) { benchWrite(b, false) }

func benchWrite(b *testing.B, fsync bool) {
	for _, where := range []string{"plain", "mount"} {
		b.Run(where, func(b *testing.B) {
			f, err := os.Create(filepath.Join(benchDirs(b)[where], "data"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			// Overwrites of a durable 1 MiB file, as in a store's data
			// file: the undo saves each block's durable bytes first.
			const blocks = 256
			if err := f.Truncate(blocks * 4096); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			block := make([]byte, 4096)
			i := int64(0)
			for b.Loop() {
				if _, err := f.WriteAt(block, i%blocks*4096); err != nil {
					b.Fatal(err)
				}
				i++
				if fsync {
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportMicros(b)
		})
	}
}

func BenchmarkCreateRename(b *testing.B) {
	for _, where := range []string{"plain", "mount"} {
		b.Run(where, func(b *testing.B) {
			dir := benchDirs(b)[where]
			target := filepath.Join(dir, "target")
			i := 0
			for b.Loop() {
				tmp := filepath.Join(dir, "tmp"+strconv.Itoa(i))
				i++
				if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.Rename(tmp, target); err != nil {
					b.Fatal(err)
				}
			}
			reportMicros(b)
		})
	}
}
