package result

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/storebench/storebench/internal/store"
)

// MaxFileBytes bounds a result file storebench reads (report, compare,
// merge): a quick suite's result is ~0.3 MB and a day-long phase's
// per-second series ~25 MB, so 256 MiB holds several day-long phases or
// thousands of cells, while input that never ends (/dev/zero renamed, a
// runaway file) is refused before it fills memory.
const MaxFileBytes = 256 << 20

// Load reads a result file, or the result.json in a directory, with
// errors that say which file and what is wrong with it, on one line.
func Load(path string) (*Result, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "result.json")
	}
	return Read(path)
}

// Read loads a result file: a regular file of at most MaxFileBytes,
// decoded as it is read. Its error is one line naming the file.
func Read(path string) (*Result, error) {
	r, err := readLimited(path, MaxFileBytes)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return r, nil
}

func readLimited(path string, limit int64) (*Result, error) {
	f, err := OpenRegular(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, offset, err := decompressed(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	dec := json.NewDecoder(src)
	var r Result
	err = dec.Decode(&r)
	if err == nil {
		// A second document, or anything but space after the first, is a
		// damaged file (two results pasted together), not this result.
		if _, terr := dec.Token(); terr != io.EOF {
			err = fmt.Errorf("data after the result's JSON at byte %d", dec.InputOffset())
			if errors.As(terr, new(*TooLargeError)) {
				err = terr
			}
		}
	}
	var (
		tooLarge *TooLargeError
		syntax   *json.SyntaxError
		field    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s: %v, the most storebench reads of a result file", path, err)
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: empty file, not a storebench result", path)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s: truncated at byte %d: its JSON ends unfinished (a copy cut short?)", path, offset())
	case errors.As(err, &syntax):
		return nil, fmt.Errorf("%s: not a storebench result: %v at byte %d", path, syntax, syntax.Offset)
	case err != nil && !errors.As(err, &field):
		return nil, fmt.Errorf("%s: %v", path, err)
	case r.Schema == "":
		return nil, fmt.Errorf("%s: not a storebench result (no JSON object with a schema field)", path)
	case r.Schema != Schema:
		return nil, fmt.Errorf("%s: schema %q, this storebench reads %q", path, r.Schema, Schema)
	case field != nil:
		return nil, fmt.Errorf("%s: field %s holds a JSON %s, want %v (at byte %d)", path, field.Field, field.Value, field.Type, field.Offset)
	}
	return &r, nil
}

// decompressed is f's JSON: as it is, or gunzipped when f is gzip
// (result.json.gz: results kept or shipped compressed, the report's test
// samples); the JSON is bounded by limit either way, so a small file
// cannot unpack into an endless one. offset is how far the JSON was read.
func decompressed(f *LimitedFile, limit int64) (src io.Reader, offset func() int64, err error) {
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, f.Offset, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, fmt.Errorf("gzip: %v", err)
	}
	lr := &limitedReader{r: zr, limit: limit}
	return lr, func() int64 { return min(lr.read, limit) }, nil
}

// limitedReader fails with a *TooLargeError once more than limit bytes
// have been read.
type limitedReader struct {
	r           io.Reader
	read, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if room := l.limit + 1 - l.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.read > l.limit {
		return n - 1, &TooLargeError{Limit: l.limit}
	}
	return n, err
}

// LimitedFile is a regular file open for reading that fails with a
// *TooLargeError once more than its limit has been read.
type LimitedFile struct {
	f *os.File
	limitedReader
}

// TooLargeError is a file read past the limit its reader allows.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return "larger than " + sizeName(e.Limit) }

// sizeName writes a limit the way it was chosen: in MiB when whole.
func sizeName(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenRegular opens path for reading if it is a regular file (or a
// symbolic link to one), and reads at most limit bytes of it. Anything
// else is refused before a read can block or never end: a FIFO (whose
// open(2) waits for a writer, deaf to SIGTERM), a device (/dev/zero never
// ends; opening some has effects), a socket, a directory. It is checked
// by stat(2) before the open and again by fstat(2) on what was opened,
// which is opened O_NONBLOCK so a FIFO put there in between cannot block
// either. Its error names path, on one line.
func OpenRegular(path string, limit int64) (*LimitedFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, not a regular file", path, store.FileKind(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathError(path, err)
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, pathError(path, err)
		}
		return nil, fmt.Errorf("%s: %s, not a regular file", path, store.FileKind(st.Mode()))
	}
	return &LimitedFile{f: f, limitedReader: limitedReader{r: f, limit: limit}}, nil
}

// Offset is how many bytes have been read.
func (l *LimitedFile) Offset() int64 { return min(l.read, l.limit) }

// Close closes the file.
func (l *LimitedFile) Close() error { return l.f.Close() }

// pathError is err without the operation's name ("open", "stat"), which
// says nothing to the user: "result.json: permission denied".
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", path, pe.Err)
	}
	return err
}
