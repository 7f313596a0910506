//go:build unix

package postgres

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckURLRefusesFilesPgxCannotRead: the files pgx reads whole while it
// parses a URL (sslrootcert, sslcert, sslkey, passfile, servicefile, from
// the URL or the environment) must be regular files of at most 4 MiB:
// sslrootcert=/dev/zero ran storebench out of memory, and a FIFO held it
// in open(2) for ever. Refused in one line, before pgx opens them.
func TestCheckURLRefusesFilesPgxCannotRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.crt")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 5<<20); err != nil { // sparse: no 5 MiB written
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.crt")
	if err := os.WriteFile(small, []byte("not read: its key is refused first"), 0o600); err != nil {
		t.Fatal(err)
	}
	const base = "postgres://bench:Sup3rS3cret@db/app?sslmode=verify-full&"
	for _, tc := range []struct {
		name, url, env, want string
	}{
		{"fifo passfile", "postgres://bench@db/app?passfile=" + fifo, "", "passfile " + fifo + ": a named pipe (FIFO), not a regular file"},
		{"fifo sslrootcert from the environment", "postgres://bench@db/app?sslmode=verify-full", fifo, "sslrootcert " + fifo + ": a named pipe (FIFO)"},
		{"large sslrootcert", base + "sslrootcert=" + big, "", "sslrootcert " + big + ": larger than 4 MiB"},
		{"device sslkey", base + "sslcert=" + small + "&sslkey=/dev/zero", "", "sslkey /dev/zero: a character device, not a regular file"},
		{"directory servicefile", "postgres://bench@db/app?service=x&servicefile=" + dir, "", "servicefile " + dir + ": a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGSSLROOTCERT", tc.env)
			// Were the FIFO opened to be read, a writer that comes later
			// ends the wait: the test fails, it does not hang.
			release := time.AfterFunc(10*time.Second, func() {
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			defer release.Stop()
			err := CheckURL(tc.url)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Sup3rS3cret") || strings.Contains(err.Error(), "\n") {
				t.Errorf("CheckURL(%s) = %v, want one line saying %q without the password", tc.url, err, tc.want)
			}
		})
	}
	// A system's whole CA bundle is well within the bound.
	if bundle := "/etc/ssl/certs/ca-certificates.crt"; fileExists(bundle) {
		if err := CheckURL(base + "sslrootcert=" + bundle); err != nil {
			t.Errorf("the system CA bundle: %v", err)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
