package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badURLSecret stands for a password in TestBadTargetURLs.
const badURLSecret = "S3cr3tXyz987"

// TestBadTargetURLs: a target whose password url.Parse rejects, a key=value
// connection string, or a URL parameter its driver refuses is bad input,
// on the command line and in a scenario file alike: exit 2, one line that
// quotes no part of the password, before any work (no result directory).
func TestBadTargetURLs(t *testing.T) {
	s := badURLSecret
	dir := t.TempDir()
	// Something listens there, so a URL that got past parsing would be
	// reached, and its cell run (exit 1 and a result directory, formerly).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hp := l.Addr().String()
	scenarioWith := func(name, url string) string {
		p := filepath.Join(dir, name+".yaml")
		body := "name: x\ntargets:\n  - url: \"" + url + "\"\nworkloads:\n  - type: kv\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"postgres password with /", []string{"--stores", "postgres://bench:Wr0ng/" + s + "@" + hp + "/db"}, "the password holds a character a URL reserves"},
		{"postgres password with #", []string{"--stores", "postgres://bench:Wr0ng#" + s + "@" + hp + "/db"}, "percent-encode"},
		{"postgres password with a space", []string{"--stores", "memory,postgres://bench:Wr0ng " + s + "@" + hp + "/db"}, "percent-encode"},
		{"redis password with ?", []string{"--stores", "redis://:Wr0ng?" + s + "@" + hp}, "percent-encode"},
		{"mariadb password with @", []string{"--stores", "mariadb://bench:Wr0ng@" + s + "@" + hp + "/db"}, "percent-encode"},
		{"mysql password with a stray %", []string{"--stores", "mysql://bench:Wr0ng%zz" + s + "@" + hp + "/db"}, "percent-encode"},
		{"key=value connection string", []string{"--stores", "host=127.0.0.1 password=" + s + " dbname=db"}, "key=value connection string"},
		{"key=value quoted password", []string{"--stores", "host=127.0.0.1 password='Wr0ng " + s + "' dbname=db"}, "key=value connection string"},
		{"URL without //", []string{"--stores", "postgres:bench:" + s + "@" + hp + "/db"}, "a URL starts with scheme://"},
		{"postgres sslmode=bogus", []string{"--stores", "postgres://bench:" + s + "@" + hp + "/db?sslmode=bogus"}, "sslmode is invalid"},
		{"mysql tls=bogus", []string{"--stores", "mysql://bench:" + s + "@" + hp + "/db?tls=bogus"}, "unknown config name: bogus"},
		{"redis protocol=9", []string{"--stores", "redis://:" + s + "@" + hp + "?protocol=9"}, "parameter protocol"},
		{"sqlite parameter", []string{"--stores", "sqlite://" + filepath.Join(dir, "x.db") + "?journal_mode=OFF"}, "parameters are not read from the URL"},
		{"files parameter", []string{"--stores", "file://" + dir + "?fsync=true"}, "parameters are not read from the URL"},
		{"sqlite remote host", []string{"--stores", "sqlite://db.example/x.db"}, "the path must be local"},
		{"scenario password with /", []string{scenarioWith("slash", "postgres://bench:Wr0ng/"+s+"@"+hp+"/db")}, "slash.yaml:3: malformed URL"},
		{"scenario key=value", []string{scenarioWith("kv", "host=127.0.0.1 password='Wr0ng "+s+"'")}, "kv.yaml:3: a key=value connection string"},
		{"scenario sslmode=bogus", []string{scenarioWith("sslmode", "postgres://bench:"+s+"@"+hp+"/db?sslmode=bogus")}, "sslmode.yaml:3: bad URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results")
			args := append([]string{"run"}, c.args...)
			if args[1] == "--stores" {
				args = append([]string{"run", "kv"}, c.args...)
			}
			r := storebench(t, nil, append(args, "--out", out)...)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.want) {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line saying %q", r.code, msg, c.want)
			}
			for _, part := range []string{s, "Wr0ng"} {
				if strings.Contains(r.stderr, part) || strings.Contains(r.stdout, part) {
					t.Errorf("the password is printed: %q %q", r.stdout, r.stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("bad input created %s: work started before the input was checked", out)
			}
		})
	}
}
