package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Thresholds (issue 33): a passing assertion exits 0, a failing one 3 with
// a line naming the assertion, the cell and the measured value, and a
// JUnit file with one failing test case (the cell × assertion, its
// phases as its parts); a malformed one exits 2 before any work.
func TestAssertExitCodes(t *testing.T) {
	out := t.TempDir()
	runKV := func(extra ...string) (int, string) {
		var buf bytes.Buffer
		args := append([]string{"run", "kv", "--stores", "memory", "--keys", "1000", "--no-hiccup", "--out", out, "--quiet"}, extra...)
		return netApp(&buf).Main(context.Background(), args), buf.String()
	}
	if code, text := runKV("--assert", "p99<=1s"); code != ExitOK || !strings.Contains(text, "assertions: all passed") {
		t.Fatalf("p99<=1s: exit %d\n%s", code, text)
	}
	junit := filepath.Join(t.TempDir(), "j.xml")
	code, text := runKV("--assert", "p99<=1ns", "--assert", "errors==0", "--junit", junit)
	if code != ExitAssert {
		t.Fatalf("p99<=1ns: exit %d, want %d\n%s", code, ExitAssert, text)
	}
	if !strings.Contains(text, "p99<=1ns: memory/kv/keys=1000 write: measured ") || !strings.Contains(text, " µs") {
		t.Errorf("no line naming the assertion, the cell and the measured value:\n%s", text)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	if doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("junit: %d failures, suites %+v; want one failure of two cases\n%s", doc.Failures, doc.Suites, b)
	}
	if f := doc.Suites[0].Cases[0].Failure; f == nil || !strings.Contains(f.Message, "write") || !strings.Contains(f.Message, "read") {
		t.Errorf("junit failure %+v: want both phases' measured values", f)
	}

	// A scenario's asserts judge the run as --assert does.
	file := filepath.Join(t.TempDir(), "judged.yaml")
	if err := os.WriteFile(file, []byte("name: judged\ntargets: [memory]\nworkloads: [{type: kv, keys: [1000]}]\nasserts: [\"memory:kv:read:p99<=1ns\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if code := netApp(&buf).Main(context.Background(), []string{"run", file, "--no-hiccup", "--out", out, "--quiet"}); code != ExitAssert ||
		!strings.Contains(buf.String(), "memory:kv:read:p99<=1ns: memory/kv/keys=1000 read: measured") {
		t.Errorf("a scenario's asserts: exit %d\n%s", code, buf.String())
	}

	entries, _ := os.ReadDir(out)
	for _, bad := range [][]string{
		{"--assert", "p99<=bogus"}, {"--assert", "nonsense"}, {"--assert", "postgres:p99<=1ms"},
		{"--assert-abort=forever", "--assert", "p99<=1s"}, {"--junit", filepath.Join(t.TempDir(), "no", "j.xml")},
	} {
		code, text := runKV(bad...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(text), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want one line, exit 2", bad, code, text)
		}
	}
	if after, _ := os.ReadDir(out); len(after) != len(entries) {
		t.Errorf("bad input made a result: %d entries, then %d", len(entries), len(after))
	}
}

// --assert-abort stops the run at the first failed assertion: the next
// cell does not run, the result says so, and the exit is 3.
func TestAssertAbort(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	code := netApp(&buf).Main(context.Background(), []string{"run", "kv", "--stores", "memory", "--keys", "1000,2000",
		"--no-hiccup", "--out", out, "--quiet", "--assert", "p99<=1ns", "--assert-abort"})
	if code != ExitAssert {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	r := readOnlyResult(t, out)
	if len(r.Cells) != 1 || !strings.Contains(strings.Join(r.Notes, " "), "stopped at the first failed assertion") {
		t.Errorf("%d cells, notes %q: want the first cell only and the note", len(r.Cells), r.Notes)
	}
}
