package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// runOnce runs the quick suite's kv experiment on memory and files and
// returns the result directory; it also checks that report.html was written
// beside result.json and its path printed.
func runOnce(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	r := storebench(t, nil, "run", "kv", "--stores", "memory,files", "--keys", "1000", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	res, path := readResult(t, out)
	if res.Status != "complete" || len(res.Cells) != 2 {
		t.Fatalf("run: %s: status %s, %d cells", path, res.Status, len(res.Cells))
	}
	page := filepath.Join(filepath.Dir(path), "report.html")
	if !strings.Contains(r.stdout, "report: "+page+"\n") {
		t.Errorf("run did not print the report's path %s:\n%s", page, r.stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("run wrote no report.html beside result.json: %v", err)
	}
	for _, want := range []string{"<!doctype html>", "<svg", "memory/kv/keys=1000", "files/kv/keys=1000"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("progress drew on a pipe: %q", r.stderr)
	}
	return filepath.Dir(path)
}

type phaseFigures struct {
	Name           string  `json:"name"`
	ThroughputOpsS float64 `json:"throughput_ops_s"`
	Raw            struct {
		P50, P90, P99, P999, Mean float64
	} `json:"latency_us"`
}

func figures(t *testing.T, dir string) map[string]map[string]map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Cells []struct {
			ID     string         `json:"id"`
			Phases []phaseFigures `json:"phases"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]map[string]float64{}
	for _, c := range r.Cells {
		out[c.ID] = map[string]map[string]float64{}
		for _, p := range c.Phases {
			out[c.ID][p.Name] = map[string]float64{"ops/s": p.ThroughputOpsS, "mean µs": p.Raw.Mean, "p50 µs": p.Raw.P50,
				"p90 µs": p.Raw.P90, "p99 µs": p.Raw.P99, "p99.9 µs": p.Raw.P999}
		}
	}
	return out
}

var (
	cellHead = regexp.MustCompile(`^(\S+/kv/keys=\d+) · (\w+)$`)
	cmpRow   = regexp.MustCompile(`^  (ops/s|mean µs|p50 µs|p90 µs|p99 µs|p99\.9 µs)\s+([0-9.,]+)\s+([0-9.,]+)\s+([0-9.,]+)×\s+(no clear difference|better|worse|spread unknown)\s+([0-9.,]+)–([0-9.,]+)\s+([0-9.,]+)–([0-9.,]+)\s*$`)
)

func parseNum(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// shows reports whether a printed figure (three significant digits) shows v.
func shows(shown, v float64) bool {
	d := shown - v
	if d < 0 {
		d = -d
	}
	return d <= 0.005*v+1e-9 || d <= 0.5
}

// TestCompareTwoRuns runs the same experiment twice and compares the runs:
// every figure of every cell gets both values and their ratio, and the
// verdict follows the intervals printed beside it, "no clear difference"
// wherever they overlap.
func TestCompareTwoRuns(t *testing.T) {
	a, b := runOnce(t), runOnce(t)
	fa, fb := figures(t, a), figures(t, b)
	r := storebench(t, nil, "compare", a, filepath.Join(b, "result.json"))
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rows, same := 0, 0
	var cell, phase string
	for _, line := range strings.Split(r.stdout, "\n") {
		if m := cellHead.FindStringSubmatch(line); m != nil {
			cell, phase = m[1], m[2]
			continue
		}
		m := cmpRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		metric, verdict := m[1], m[5]
		va, vb := fa[cell][phase][metric], fb[cell][phase][metric]
		sa, sb, ratio := parseNum(t, m[2]), parseNum(t, m[3]), parseNum(t, m[4])
		if !shows(sa, va) || !shows(sb, vb) {
			t.Errorf("%s %s %s: printed %s and %s, the results say %v and %v", cell, phase, metric, m[2], m[3], va, vb)
		}
		if !shows(ratio, vb/va) {
			t.Errorf("%s %s %s: ratio %s, want %.4g", cell, phase, metric, m[4], vb/va)
		}
		aLo, aHi, bLo, bHi := parseNum(t, m[6]), parseNum(t, m[7]), parseNum(t, m[8]), parseNum(t, m[9])
		if aLo > sa*1.006 || aHi < sa*0.994 || bLo > sb*1.006 || bHi < sb*0.994 {
			t.Errorf("%s %s %s: an interval does not hold its value: %s", cell, phase, metric, line)
		}
		clearlyOverlap := bLo < aHi*0.99 && aLo < bHi*0.99
		clearlyApart := bLo > aHi*1.01 || aLo > bHi*1.01
		switch {
		case va == vb && verdict != "no clear difference":
			t.Errorf("%s %s %s: the same value in both runs, verdict %q", cell, phase, metric, verdict)
		case clearlyOverlap && verdict != "no clear difference":
			t.Errorf("%s %s %s: the intervals overlap, verdict %q: %s", cell, phase, metric, verdict, line)
		case clearlyApart && verdict == "no clear difference":
			t.Errorf("%s %s %s: the intervals are apart, verdict %q: %s", cell, phase, metric, verdict, line)
		case verdict == "spread unknown":
			t.Errorf("%s %s %s: no spread although both runs have histograms", cell, phase, metric)
		}
		if verdict == "no clear difference" {
			same++
		}
	}
	if want := 2 * 2 * 6; rows != want {
		t.Errorf("%d comparison rows, want %d (2 cells × 2 phases × 6 metrics):\n%s", rows, want, r.stdout)
	}
	if same == 0 {
		t.Errorf("two runs of the same experiment and not one %q:\n%s", "no clear difference", r.stdout)
	}
	if !strings.Contains(r.stdout, "B vs A: 24 figures of 2 matched cells") {
		t.Errorf("no summary line:\n%s", r.stdout)
	}

	md := storebench(t, nil, "compare", a, b, "--format", "md")
	if md.code != 0 || !strings.Contains(md.stdout, "| memory/kv/keys=1000 | write | ops/s |") {
		t.Errorf("compare --format md: exit %d\n%s%s", md.code, md.stdout, md.stderr)
	}
}

// TestReportCommand renders the checked-in sample in every format and
// rejects bad input with one line and exit code 2.
func TestReportCommand(t *testing.T) {
	sample, err := filepath.Abs("../../internal/report/testdata/sample-result.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notes.txt", "hello\n")
	notResult := write("other.json", `{"name": "something else"}`)
	oldSchema := write("old.json", `{"schema": "storebench.result/v0"}`)

	good := []struct {
		name string
		args []string
		file string // the output file, when -o
		want string
	}{
		{"text by default", []string{"report", sample}, "", "kv write: total ms to write N keys one by one"},
		{"a directory stands for its result.json", []string{"report", filepath.Dir(sample) + "/"}, "", ""},
		{"markdown", []string{"report", sample, "--format", "md"}, "", "# storebench · kv · 20261122T023107Z"},
		{"csv", []string{"report", sample, "-f", "csv"}, "", "run_id,cell_id,target,store,workload,entry,params,cell_status,phase,metric,value,unit\n"},
		{"html from the extension", []string{"report", sample, "-o", filepath.Join(dir, "r.html")}, filepath.Join(dir, "r.html"), "<!doctype html>"},
		{"csv from the extension", []string{"report", sample, "-o", filepath.Join(dir, "r.csv")}, filepath.Join(dir, "r.csv"), "run_id,cell_id"},
		{"format beats the extension", []string{"report", sample, "-o", filepath.Join(dir, "r.txt"), "--format", "md"}, filepath.Join(dir, "r.txt"), "| target |"},
		{"help", []string{"report", "--help"}, "", "Examples:"},
		{"compare help", []string{"compare", "--help"}, "", "no clear difference"},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "a directory stands for its result.json" {
				// The testdata directory holds sample-result.json, not result.json.
				d := t.TempDir()
				b, _ := os.ReadFile(sample)
				if err := os.WriteFile(filepath.Join(d, "result.json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				c.args = []string{"report", d}
				c.want = "kv read: total ms to read N keys one by one"
			}
			r := storebench(t, nil, c.args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			got := r.stdout
			if c.file != "" {
				b, err := os.ReadFile(c.file)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
				if !strings.Contains(r.stdout, "report: "+c.file) {
					t.Errorf("did not print where it wrote: %q", r.stdout)
				}
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("output lacks %q:\n%.400s", c.want, got)
			}
		})
	}

	bad := []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, []string{"nope.json", "no such file"}},
		{"not JSON", []string{"report", notJSON}, []string{"notes.txt", "not a storebench result"}},
		{"JSON but not a result", []string{"report", notResult}, []string{"other.json", "not a storebench result"}},
		{"another schema", []string{"report", oldSchema}, []string{"old.json", "storebench.result/v0"}},
		{"unknown format", []string{"report", sample, "--format", "pdf"}, []string{`"pdf"`, "unknown format", "html"}},
		{"extension without a format", []string{"report", sample, "-o", filepath.Join(dir, "r.pdf")}, []string{"r.pdf", "--format"}},
		{"output directory missing", []string{"report", sample, "-o", filepath.Join(dir, "no", "such", "r.html")}, []string{"r.html"}},
		{"no argument", []string{"report"}, []string{"accepts 1 arg"}},
		{"compare one run", []string{"compare", sample}, []string{"at least 2 arg"}},
		{"compare a missing run", []string{"compare", sample, filepath.Join(dir, "nope.json")}, []string{"nope.json", "no such file"}},
		{"compare an unknown format", []string{"compare", sample, sample, "--format", "pdf"}, []string{`"pdf"`, "unknown format"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r := storebench(t, nil, c.args...)
			if r.code != 2 {
				t.Fatalf("exit code %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") != 0 {
				t.Errorf("error is not one line:\n%s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".r.*")); len(entries) > 0 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
