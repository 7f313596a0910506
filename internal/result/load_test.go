package result

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readSoon reads path, failing the test when the read has not returned
// within a few seconds (a FIFO's open(2) used to wait for a writer
// forever); it then writes to the FIFO so the stuck reader can end.
func readSoon(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Read(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("Read(%s) still blocked after 5 s", path)
		return nil
	}
}

// TestReadRefusesWhatIsNotARegularFile: a FIFO is refused without
// blocking, a device (/dev/zero: it never ends) without reading it, each
// in one line naming the file.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "result.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "a named pipe (FIFO), not a regular file",
		"/dev/zero": "a character device, not a regular file",
		link:        "a character device, not a regular file",
	} {
		err := readSoon(t, path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): %v, want %q", path, err, want)
		}
	}
}

// TestReadIsBounded: a file of the limit reads, one byte more is refused
// with the limit, however valid its start.
func TestReadIsBounded(t *testing.T) {
	dir := t.TempDir()
	doc := fmt.Sprintf(`{"schema":%q,"notes":["%s"]}`, Schema, strings.Repeat("x", 1000))
	exact := filepath.Join(dir, "exact.json")
	if err := os.WriteFile(exact, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readLimited(exact, int64(len(doc))); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	if _, err := readLimited(exact, int64(len(doc))-1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", len(doc)-1)) {
		t.Fatalf("a file one byte over the limit: %v, want it refused with the limit", err)
	}
	if _, err := readLimited(exact, 10<<20); err != nil {
		t.Fatal(err)
	}
	if err := (&TooLargeError{Limit: MaxFileBytes}).Error(); err != "larger than 256 MiB" {
		t.Errorf("the limit reads %q", err)
	}
}

// TestReadSaysWhereAFileIsTruncated: a result cut short (a copy
// interrupted) says where it ends, not that it is no result.
func TestReadSaysWhereAFileIsTruncated(t *testing.T) {
	b, err := os.ReadFile("../report/testdata/sample-result.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []int{1, 40, 5000, len(b) - 3} {
		p := filepath.Join(dir, fmt.Sprintf("cut%d.json", n))
		if err := os.WriteFile(p, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s: truncated at byte %d", p, n)
		if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%d bytes: %v, want %q", n, err, want)
		}
	}
	bad := map[string]string{
		"":                                      "empty file",
		"notes\n":                               "not a storebench result: invalid character 'o' in literal null (expecting 'u') at byte 2",
		`{"a":1}`:                               "not a storebench result (no JSON object with a schema field)",
		`[1]`:                                   "not a storebench result (no JSON object with a schema field)",
		`{"schema":"other/v9"}`:                 `schema "other/v9"`,
		`{"schema":"` + Schema + `"}{}`:         "data after the result's JSON at byte",
		`{"schema":"` + Schema + `","seed":-1}`: "field seed holds a JSON number -1, want uint64",
	}
	for doc, want := range bad {
		p := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestReadGzip: a gzipped result reads as the plain one; its JSON, not the
// compressed bytes, is what the limit bounds (a small file that unpacks
// into a huge one is refused); a cut gzip says it is truncated.
func TestReadGzip(t *testing.T) {
	dir := t.TempDir()
	doc := fmt.Sprintf(`{"schema":%q,"notes":["%s"]}`, Schema, strings.Repeat("x", 100000))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "r.json.gz")
	if err := os.WriteFile(p, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(p)
	if err != nil || len(r.Notes) != 1 || len(r.Notes[0]) != 100000 {
		t.Fatalf("read %v, %v", r, err)
	}
	if z.Len() >= 10000 {
		t.Fatalf("the gzip is %d bytes: not a small file", z.Len())
	}
	if _, err := readLimited(p, 10000); err == nil || !strings.Contains(err.Error(), "larger than 10000 bytes") {
		t.Errorf("a 100 kB JSON in a %d-byte gzip under a 10 kB limit: %v", z.Len(), err)
	}
	cut := filepath.Join(dir, "cut.json.gz")
	if err := os.WriteFile(cut, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(cut); err == nil || !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("a cut gzip: %v", err)
	}
}
