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

func BenchmarkWriteFsync4KiB(b *testing.B) {
	for _, where := range []string{"plain", "mount"} {
		b.Run(where, func(b *testing.B) {
			f, err := os.Create(filepath.Join(benchDirs(b)[where], "data"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			block := make([]byte, 4096)
			for b.Loop() {
				if _, err := f.Write(block); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
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
