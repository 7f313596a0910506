package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smallScenario = "name: t\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10]}\n"

// padded is smallScenario followed by a comment line that makes it size
// bytes long.
func padded(size int) string {
	pad := size - len(smallScenario) - len("#\n")
	return smallScenario + "#" + strings.Repeat("x", pad) + "\n"
}

// wantRefused checks err is one line that says each of want.
func wantRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("read, want an error saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: want one line saying %q", err, w)
		}
	}
}

// A scenario is a regular file of at most MaxFileBytes: a directory, a
// device or a larger file is refused by ReadFile before it is read whole
// (/dev/zero ran storebench out of memory).
func TestReadFileRefusesWhatIsNoScenario(t *testing.T) {
	dir := t.TempDir()
	wantRefused(t, readFile(t, dir), "scenario "+dir+": a directory, not a regular file")
	if _, err := os.Stat("/dev/zero"); err == nil {
		wantRefused(t, readFile(t, "/dev/zero"), "scenario /dev/zero: a character device, not a regular file")
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(padded(MaxFileBytes+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, readFile(t, big), "scenario "+big+": larger than 1 MiB")
	wantRefused(t, readFile(t, filepath.Join(dir, "missing.yaml")), "missing.yaml: no such file or directory")

	// The bound itself is a scenario.
	most := filepath.Join(dir, "most.yaml")
	if err := os.WriteFile(most, []byte(padded(MaxFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadFile(most); err != nil || s.Name != "t" || s.Source != most {
		t.Errorf("a scenario of %d bytes: %+v, %v; want it read", MaxFileBytes, s, err)
	}
}

func readFile(t *testing.T, path string) error {
	t.Helper()
	_, err := ReadFile(path)
	return err
}

// endless is a reader that never ends, counting what it gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

// Parse reads at most MaxFileBytes (and a byte to tell) of any reader.
func TestParseStopsAtTheBound(t *testing.T) {
	r := &endless{}
	_, err := Parse("stream.yaml", r)
	wantRefused(t, err, "scenario stream.yaml: larger than 1 MiB")
	if r.n > 2*MaxFileBytes {
		t.Errorf("read %d bytes of an endless reader, want at most about %d", r.n, MaxFileBytes)
	}
}
