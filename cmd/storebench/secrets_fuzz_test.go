package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/cli"
	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/workload/all"
)

// plantedSecret is the heart of the password the fuzz target plants: no
// output may hold it, in any form, whatever surrounds it in the password.
const plantedSecret = "Zq7PlantedPw"

// leakShapes are the places a password can be put: a URL (of a scheme, with
// the password in its user information) in every field of a command line or
// a scenario file that takes a string. Each builds the argument vector; a
// scenario is written to the file yaml names ({YAML} in the arguments).
var leakShapes = []struct {
	name string
	args []string
	yaml string
}{
	{"stores", []string{"run", "kv", "--stores", "{URL}", "--keys", "10"}, ""},
	{"stores after memory", []string{"run", "kv", "--stores", "memory,{URL}", "--keys", "10"}, ""},
	{"stores before memory", []string{"run", "kv", "--stores", "{URL},memory", "--keys", "10"}, ""},
	{"stores --keep", []string{"run", "kv", "--stores", "{URL}", "--keys", "10", "--keep"}, ""},
	{"url as scenario", []string{"run", "{URL}"}, ""},
	{"url as command", []string{"{URL}", "--stores", "memory"}, ""},
	{"url as workload flag", []string{"run", "kv", "--stores", "memory", "--key-dist", "{URL}"}, ""},
	{"clean --stores", []string{"clean", "--stores", "{URL}", "--dry-run"}, ""},
	{"clean url argument", []string{"clean", "{URL}", "--dry-run"}, ""},
	{"report url", []string{"report", "{URL}"}, ""},
	{"compare urls", []string{"compare", "{URL}", "{URL}"}, ""},
	{"merge url", []string{"merge", "{URL}"}, ""},
	{"history url", []string{"history", "{URL}"}, ""},
	{"scenario target url", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - {name: t, url: {QURL}}\nworkloads:\n  - type: kv\n    keys: [10]\n"},
	{"scenario target string", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - {QURL}\nworkloads:\n  - type: kv\n    keys: [10]\n"},
	{"scenario target named by url", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - {name: {QURL}, store: memory}\nworkloads:\n  - type: kv\n    keys: [10]\n"},
	{"scenario workload targets url", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - memory\nworkloads:\n  - type: kv\n    keys: [10]\n    targets: [{QURL}]\n"},
	{"scenario alias", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - {name: t, url: &u {QURL}}\nworkloads:\n  - type: kv\n    keys: [10]\n    targets: [*u]\n"},
	{"scenario name", []string{"run", "{YAML}"}, "name: {QURL}\ntargets:\n  - memory\nworkloads:\n  - type: kv\n    keys: [10]\n"},
	{"scenario workload name", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - memory\nworkloads:\n  - type: kv\n    name: {QURL}\n    keys: [10]\n"},
	{"scenario caches", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - sqlite\nworkloads:\n  - type: cache-aside\n    cache_aside:\n      caches: [none, {QURL}]\n      keys: 10\n"},
	{"scenario unquoted", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - url: {RAWURL}\nworkloads:\n  - type: kv\n    keys: {RAWURL}\n"},
	{"scenario value type", []string{"run", "{YAML}"}, "name: x\ntargets:\n  - memory\nworkloads:\n  - type: kv\n    keys: [{QURL}]\n"},
}

// leakURLs are the URL shapes: {PW} is the password as the user wrote it
// (raw, so it may hold what a URL reserves), {ENC} percent-encoded, {PORT} a
// closed loopback port (refused at once), {DIR} a directory of the case's own.
var leakURLs = []string{
	"redis://u:{PW}@127.0.0.1:{PORT}",
	"redis://{PW}@127.0.0.1:{PORT}",
	"redis://:{ENC}@127.0.0.1:{PORT}/",
	"rediss://:{PW}@127.0.0.1:{PORT}/?skip_verify=true",
	"postgres://u:{PW}@127.0.0.1:{PORT}/db",
	"postgresql://{PW}@127.0.0.1:{PORT}/db?sslmode=disable",
	"mysql://root:{PW}@127.0.0.1:{PORT}/db",
	"mariadb://root:{ENC}@127.0.0.1:{PORT}/db",
	"memcached://u:{PW}@127.0.0.1:{PORT}",
	"redis-cluster://u:{PW}@127.0.0.1:{PORT},127.0.0.1:{PORT}/",
	"postgres-replicas://u:{PW}@127.0.0.1:{PORT},127.0.0.1:{PORT}/db",
	"sqlite://u:{PW}@{DIR}/x.db",
	"file://{PW}@{DIR}",
	"postgres://127.0.0.1:{PORT}/db?password={PW}",
}

// FuzzNoSecretLeaks runs whole command lines and scenario files (in
// process, as the binary does, on loopback ports where nothing listens, or
// on SQLite and files targets that run for real) with a planted password,
// and fails when the password reaches stdout, stderr or any file the run
// writes: as written, case-folded, percent-encoded or in base64. Nothing
// may panic or hang either.
func FuzzNoSecretLeaks(f *testing.F) {
	passwords := [][2]string{
		{"p@ss,", ""},       // issue 28: the comma split of --stores echoed "Secret"
		{"", ",x@y"},        // an '@' and a comma after it
		{"", ""},            // plain
		{"a/b?c#", " d%zz"}, // what url.Parse rejects
		{"", "'\"\n:"},      // quotes and a newline, in YAML too
		{",redis:", ""},     // a store's name inside the password
		{"", ",memory"},     // a store's name after a comma
		{"://", "@"},        // a scheme's mark inside the password
	}
	// Every shape with every URL, with issue 28's password and one other
	// in turn (the whole product takes long for little more).
	for s := range leakShapes {
		for u := range leakURLs {
			for _, pw := range [][2]string{passwords[0], passwords[1+(s+u)%(len(passwords)-1)]} {
				f.Add(uint8(s), uint8(u), pw[0], pw[1])
			}
		}
	}
	port := closedPort(f)
	f.Fuzz(func(t *testing.T, shape, shapeURL uint8, before, after string) {
		if len(before)+len(after) > 64 || strings.ContainsRune(before+after, 0) {
			return // a password of at most 64 bytes, without NUL (no argument vector holds one)
		}
		sh := leakShapes[int(shape)%len(leakShapes)]
		pw := before + plantedSecret + after
		tmpl := leakURLs[int(shapeURL)%len(leakURLs)]
		if (strings.HasPrefix(tmpl, "file:") || strings.HasPrefix(tmpl, "sqlite:")) && strings.Contains(before, "/") {
			// A file URL's authority ends at its first '/': what follows
			// is a path ("file:///x@/dir" names the directory "/x@/dir"),
			// which is printed, not a password.
			return // a path, not a password
		}
		if strings.Contains(tmpl, "//{PW}@") && strings.Contains(pw, ":") {
			// User information alone: a ':' in it makes what precedes it a
			// user name ("redis://name:pw@h"), which is shown by design.
			return // a user name, not a password
		}
		in, out := t.TempDir(), t.TempDir()
		raw := strings.NewReplacer("{PW}", pw, "{ENC}", url.QueryEscape(pw), "{PORT}", port, "{DIR}", in).Replace(tmpl)
		quoted, _ := json.Marshal(raw) // a JSON string is a YAML double-quoted scalar
		args := make([]string, 0, len(sh.args)+3)
		for _, a := range sh.args {
			switch a {
			case "{URL}":
				a = raw
			case "{YAML}":
				a = filepath.Join(in, "s.yaml")
				body := strings.NewReplacer("{QURL}", string(quoted), "{RAWURL}", raw).Replace(sh.yaml)
				if err := os.WriteFile(a, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				a = strings.ReplaceAll(a, "{URL}", raw)
			}
			args = append(args, a)
		}
		if args[0] == "run" {
			args = append(args, "--out", out, "--data-dir", out)
		}
		var stdout, stderr bytes.Buffer
		app := &cli.App{Registry: kinds.All(), Workloads: all.Types(), Stdout: &stdout, Stderr: &stderr, Version: "fuzz", Commit: "fuzz"}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		app.Main(ctx, args)
		if ctx.Err() != nil {
			t.Fatalf("%q did not end within a minute", args)
		}
		texts := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
		_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				texts[p] = string(b)
			}
			return nil
		})
		for where, text := range texts {
			if form, ok := holdsSecret(text, plantedSecret); ok {
				t.Errorf("shape %q, URL %q: %s of %q holds the password (%s):\n%s", sh.name, raw, where, args, form, linesWith(text, plantedSecret))
			}
		}
	})
}

// linesWith is the lines of text that hold s (all of text if none does
// as written: another form of s is there).
func linesWith(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(l), strings.ToLower(s)) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return text
	}
	return strings.Join(out, "\n")
}

// holdsSecret says whether text holds s, and in which form.
func holdsSecret(text, s string) (string, bool) {
	if strings.Contains(strings.ToLower(text), strings.ToLower(s)) {
		return "as written or case-folded", true
	}
	if strings.Contains(text, url.QueryEscape(s)) || strings.Contains(text, url.PathEscape(s)) {
		return "percent-encoded", true
	}
	// In base64 the secret's encoding depends on its offset in a block of
	// three bytes: check the part that is the same whatever precedes it.
	for pad := 0; pad < 3; pad++ {
		b := append(bytes.Repeat([]byte{0}, pad), s...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			e := enc.EncodeToString(b)
			if core := e[4 : len(e)-4]; strings.Contains(text, core) {
				return fmt.Sprintf("base64, offset %d", pad), true
			}
		}
	}
	return "", false
}
