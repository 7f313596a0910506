package report

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// mixPath is a real run of `storebench run mix --stores memory,redis
// --duration 2s`: phases with figures per kind of operation.
const mixPath = "testdata/mix-result.json.gz"

func readMix(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.Read(mixPath)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			n += len(p.ByOp)
		}
	}
	if n < 4 {
		t.Fatalf("%s has %d kinds of operation, want gets and sets of 2 cells", mixPath, n)
	}
	return r
}

func TestByOpText(t *testing.T) {
	r := readMix(t)
	var b bytes.Buffer
	Text(&b, r)
	golden(t, "mix.txt.golden", b.Bytes())
	rows := map[string]bool{} // the first four columns of every line
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			rows[strings.Join(f[:4], " ")] = true
		}
	}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			for op, f := range p.ByOp {
				if want := fmt.Sprintf("%s %s %s %d", c.ID, p.Name, op, f.Ops); !rows[want] {
					t.Errorf("the summary has no row %q", want)
				}
			}
		}
	}
}

func TestByOpCSV(t *testing.T) {
	r := readMix(t)
	rows := csvRows(t, r)
	got := map[string]string{} // cell phase metric -> value
	for _, row := range rows[1:] {
		got[row[1]+" "+row[8]+" "+row[9]] = row[10]
	}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			var sum int64
			for op, f := range p.ByOp {
				key := c.ID + " " + p.Name + " op_" + op + "_"
				if got[key+"ops"] != strconv.FormatInt(f.Ops, 10) || got[key+"latency_p99_us"] != exact(f.LatencyUs.P99) ||
					got[key+"latency_p50_us"] != exact(f.LatencyUs.P50) || got[key+"errors"] != strconv.FormatInt(opErrors(f), 10) {
					t.Errorf("%s: ops %q p50 %q p99 %q errors %q; the result says %+v", key, got[key+"ops"], got[key+"latency_p50_us"], got[key+"latency_p99_us"], got[key+"errors"], f)
				}
				n, _ := strconv.ParseInt(got[key+"ops"], 10, 64)
				sum += n
			}
			if ops := got[c.ID+" "+p.Name+" ops"]; ops != strconv.FormatInt(sum, 10) {
				t.Errorf("%s %s: op_*_ops add up to %d, ops is %s", c.ID, p.Name, sum, ops)
			}
		}
	}
	// docs/results.md documents every per-kind metric name.
	readme, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	kind := regexp.MustCompile(`^[^ ]+ [^ ]+ op_[a-z]+_`)
	for k := range got {
		if !kind.MatchString(k) {
			continue
		}
		name := "op_<op>_" + kind.ReplaceAllString(k, "")
		if !bytes.Contains(readme, []byte("`"+name+"`")) {
			t.Errorf("docs/results.md does not document the CSV name `%s`", name)
		}
	}
}

func TestByOpMarkdown(t *testing.T) {
	r := readMix(t)
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	_, table, ok := strings.Cut(out, "## By operation")
	if !ok {
		t.Fatal("no By operation section")
	}
	table, _, _ = strings.Cut(table, "\n\n## ")
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		if strings.HasPrefix(line, "|") && strings.Count(line, "|") != 15 {
			t.Errorf("row with %d pipes, want 15 (14 columns): %s", strings.Count(line, "|"), line)
		}
	}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			for op, f := range p.ByOp {
				want := fmt.Sprintf("| %s | %s | %s | %s |", mdText(c.ID), p.Name, op, thousands(f.Ops))
				if !strings.Contains(table, want) {
					t.Errorf("no row starting %q", want)
				}
			}
		}
	}
}

func TestByOpHTML(t *testing.T) {
	r := readMix(t)
	doc := htmlDoc(t, r)
	checked := 0
	for _, table := range findAll(doc, withAttr("data-table")) {
		if kind, _ := attr(table, "data-table"); kind != "by-op" {
			continue
		}
		for _, tr := range findAll(table, withAttr("data-op")) {
			cell, _ := attr(tr, "data-cell")
			ph, _ := attr(tr, "data-phase")
			op, _ := attr(tr, "data-op")
			p := phaseOfJSON(t, r, cell, ph)
			f, ok := p.ByOp[op]
			if !ok {
				t.Fatalf("row %s %s %s: no such kind in the result", cell, ph, op)
			}
			l := f.LatencyUs
			want := map[string]float64{"ops": float64(f.Ops), "share": float64(f.Ops) / float64(p.Ops), "ops_s": f.ThroughputOpsS,
				"p50": l.P50, "p90": l.P90, "p95": opP95(f), "p99": l.P99, "p999": l.P999, "max": l.Max, "mean": l.Mean, "errors": float64(opErrors(f))}
			for _, td := range findAll(tr, withAttr("data-v")) {
				m, _ := attr(td, "data-m")
				w, known := want[m]
				if got := floatAttr(t, td, "data-v"); !known || got != w {
					t.Errorf("by-op %s %s %s %s: %v, the result says %v", cell, ph, op, m, got, w)
				}
				checked++
			}
		}
	}
	if checked != 4*11 {
		t.Errorf("%d figures checked in the by-op table, want 4 rows × 11", checked)
	}

	// The chart of each kind's percentiles, in the mix section, and its table.
	fig := figureOf(t, doc, "latency-by-op", "mix", "mix")
	if fig == nil {
		return
	}
	checkSVG(t, fig)
	checked = 0
	for _, tr := range findAll(fig, withAttr("data-op")) {
		cell, _ := attr(tr, "data-cell")
		op, _ := attr(tr, "data-op")
		f, ok := phaseOfJSON(t, r, cell, "mix").ByOp[op]
		if !ok {
			t.Fatalf("chart row %s %s: no such kind in the result", cell, op)
		}
		l := f.LatencyUs
		want := map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max, "mean": l.Mean, "stddev": l.Stddev}
		for _, td := range findAll(tr, withAttr("data-v")) {
			m, _ := attr(td, "data-m")
			w, known := want[m]
			if got := floatAttr(t, td, "data-v"); !known || got != w {
				t.Errorf("latency-by-op %s %s %s: %v, the result says %v", cell, op, m, got, w)
			}
			checked++
		}
	}
	if checked != 4*7 {
		t.Errorf("%d figures checked in the latency-by-op table, want 4 rows × 7", checked)
	}
	// Its markers carry the same figures.
	points := 0
	for _, g := range findAll(fig, withAttr("data-series")) {
		if g.Data == "g" {
			points++
		}
	}
	if points != 4*5 {
		t.Errorf("%d markers in the latency-by-op chart, want 4 rows × 5 percentiles", points)
	}
}
