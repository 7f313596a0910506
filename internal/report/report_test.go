package report

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const samplePath = "testdata/sample-result.json"

// readSample loads the checked-in result of a real run.
func readSample(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.Read(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// svgElement is an inline chart or swatch of an HTML report; svgPart is
// an element inside one, its tag and class.
var (
	svgElement = regexp.MustCompile(`(?s)(<svg[^>]*>)(.*?)</svg>`)
	svgPart    = regexp.MustCompile(`<([a-zA-Z]+)(?:[^>]*? class="([^"]*)")?`)
)

// htmlGolden compares an HTML report with testdata/name (or rewrites it)
// without what other tests check: the embedded assets (their own files)
// and each <svg>'s coordinates, of which the golden keeps how many of each
// element and class it has (html_test.go checks the charts' structure,
// browser_test.go how Chromium draws them). Every figure of a chart is in
// the table the chart carries, so a changed figure still fails.
//
// Of every page but the sample's, the golden keeps each section as an
// outline (how many of each element) and a hash: a section's tables and
// sentences are the same model's as the Markdown report's (whose golden
// shows them in words), written by the one HTML writer that
// sample.html.golden keeps whole; a changed section still fails here, and
// the Markdown golden shows what changed.
func htmlGolden(t *testing.T, name string, page []byte) {
	t.Helper()
	s := htmlForGolden(string(page))
	if name != "sample.html.golden" {
		s = htmlSection.ReplaceAllStringFunc(s, func(sec string) string {
			m := htmlSection.FindStringSubmatch(sec)
			count := map[string]int{}
			for _, tag := range htmlTag.FindAllStringSubmatch(m[2], -1) {
				count[tag[1]]++
			}
			var parts []string
			for _, k := range sortedKeys(count) {
				parts = append(parts, k+"×"+strconv.Itoa(count[k]))
			}
			sum := sha256.Sum256([]byte(m[2]))
			return fmt.Sprintf("%s%s; sha256 %x</section>", m[1], strings.Join(parts, ", "), sum[:6])
		})
	}
	golden(t, name, []byte(s))
}

// htmlSection is a report section (its opening tag, its body); htmlTag an
// element's opening tag.
var (
	htmlSection = regexp.MustCompile(`(?s)(<section[^>]*>)(.*?)</section>`)
	htmlTag     = regexp.MustCompile(`<([a-z][a-z0-9]*)`)
)

// htmlForGolden is the page as htmlGolden compares it.
func htmlForGolden(page string) string {
	s := strings.Replace(page, "<style>\n"+reportCSS+"</style>", "<style>assets/report.css</style>", 1)
	s = strings.Replace(s, "<script>\n"+reportJS+"</script>", "<script>assets/report.js</script>", 1)
	s = svgElement.ReplaceAllStringFunc(s, func(svg string) string {
		m := svgElement.FindStringSubmatch(svg)
		count := map[string]int{}
		for _, p := range svgPart.FindAllStringSubmatch(m[2], -1) {
			count[strings.TrimSpace(p[1]+" "+p[2])]++
		}
		var parts []string
		for _, k := range sortedKeys(count) {
			parts = append(parts, k+"×"+strconv.Itoa(count[k]))
		}
		return m[1] + strings.Join(parts, ", ") + "</svg>"
	})
	return s
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		diffLine := 0
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for diffLine < len(gl) && diffLine < len(wl) && bytes.Equal(gl[diffLine], wl[diffLine]) {
			diffLine++
		}
		g, w := "", ""
		if diffLine < len(gl) {
			g = string(gl[diffLine])
		}
		if diffLine < len(wl) {
			w = string(wl[diffLine])
		}
		where := "" // an HTML report's section the line is in
		for i := min(diffLine, len(wl)-1); i >= 0 && strings.HasSuffix(name, ".html.golden"); i-- {
			if _, id, ok := bytes.Cut(wl[i], []byte(`<section id="`)); ok {
				where = ", section " + string(id[:max(bytes.IndexByte(id, '"'), 0)])
				break
			}
		}
		t.Errorf("%s differs from the output at line %d%s (go test ./internal/report -update rewrites it):\n got: %s\nwant: %s", path, diffLine+1, where, g, w)
	}
}

// TestTextGolden: the terminal summary of the sample.
func TestTextGolden(t *testing.T) {
	var b bytes.Buffer
	Text(&b, readSample(t))
	golden(t, "sample.txt.golden", b.Bytes())
}

// TestMarkdownGolden: the Markdown report of the sample.
func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, readSample(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.md.golden", b.Bytes())
}

// TestCSVGolden: the CSV report of the sample.
func TestCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, readSample(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.csv.golden", b.Bytes())
}

// TestCSVRows: a row per cell × phase × metric, every value a plain number,
// and the figures are the result's.
func TestCSVRows(t *testing.T) {
	r := withArticleAndServerTime(t)
	rows := csvRows(t, r)
	if !slices.Equal(rows[0], CSVColumns) {
		t.Fatalf("header %v, want %v", rows[0], CSVColumns)
	}
	col := map[string]int{}
	for i, c := range CSVColumns {
		col[c] = i
	}
	type key struct{ cell, phase, metric string }
	seen := map[key]string{}
	plain := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	for _, row := range rows[1:] {
		k := key{row[col["cell_id"]], row[col["phase"]], row[col["metric"]]}
		if _, dup := seen[k]; dup {
			t.Errorf("two rows for %v", k)
		}
		seen[k] = row[col["value"]]
		if !plain.MatchString(row[col["value"]]) {
			t.Errorf("%v: value %q is not a plain decimal", k, row[col["value"]])
		}
		if row[col["unit"]] == "" || row[col["run_id"]] != r.ID {
			t.Errorf("%v: row %v", k, row)
		}
	}
	for _, c := range r.Cells {
		if seen[key{c.ID, "", "cell_seconds"}] != strconv.FormatFloat(c.Seconds, 'f', -1, 64) {
			t.Errorf("%s: cell_seconds %q, want %v", c.ID, seen[key{c.ID, "", "cell_seconds"}], c.Seconds)
		}
		for _, p := range c.Phases {
			for metric, want := range map[string]float64{
				"ops": float64(p.Ops), "throughput_ops_s": p.ThroughputOpsS, "duration_s": p.DurationS,
				"latency_p50_us": p.LatencyUs.P50, "latency_p90_us": p.LatencyUs.P90, "latency_p99_us": p.LatencyUs.P99,
				"latency_p999_us": p.LatencyUs.P999, "latency_max_us": p.LatencyUs.Max, "latency_mean_us": p.LatencyUs.Mean,
				"client_cpu_us_per_op": p.ClientCPUUsPerOp,
			} {
				got, err := strconv.ParseFloat(seen[key{c.ID, p.Name, metric}], 64)
				if err != nil || got != want {
					t.Errorf("%s %s %s: %q, the result says %v", c.ID, p.Name, metric, seen[key{c.ID, p.Name, metric}], want)
				}
			}
			_, hasServer := seen[key{c.ID, p.Name, "server_cpu_us_per_op"}]
			if hasServer != (p.Server != nil) {
				t.Errorf("%s %s: server rows %v, server figures %v", c.ID, p.Name, hasServer, p.Server != nil)
			}
			_, hasST := seen[key{c.ID, p.Name, "server_time_per_call_us"}]
			if hasST != (p.ServerTime != nil) {
				t.Errorf("%s %s: server time rows %v, server time %v", c.ID, p.Name, hasST, p.ServerTime != nil)
			}
		}
	}
	// docs/results.md documents every column and metric name.
	readme, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range CSVColumns {
		names[c] = true
	}
	for k := range seen {
		names[regexp.MustCompile(`^server_time_[a-z]+_(calls|mean_us)$`).ReplaceAllString(k.metric, "server_time_<op>_$1")] = true
	}
	for n := range names {
		if !bytes.Contains(readme, []byte("`"+n+"`")) {
			t.Errorf("docs/results.md does not document the CSV name `%s`", n)
		}
	}
}

// TestMarkdownTables: every table row has as many cells as its header (so
// GitHub renders it), and the article and server time are there.
func TestMarkdownTables(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, withArticleAndServerTime(t)); err != nil {
		t.Fatal(err)
	}
	cells := func(line string) int {
		// Count unescaped pipes.
		n := 0
		for i := 0; i < len(line); i++ {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] == '|' {
				n++
			}
		}
		return n
	}
	want, tables := 0, 0
	for i, line := range strings.Split(b.String(), "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			want = 0
		case want == 0:
			want = cells(line)
			tables++
		case cells(line) != want:
			t.Errorf("line %d has %d cell borders, its table %d: %s", i+1, cells(line), want, line)
		}
	}
	if tables < 8 {
		t.Errorf("%d tables", tables)
	}
	for _, s := range []string{"## The article: PostgreSQL vs Redis vs Memcached &lt;performance&gt;", "## Client vs server time", "redis counters", "their client is Python"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
}

func TestAxisLabels(t *testing.T) {
	for x, want := range map[float64]string{0: "0%", 1: "90%", 2: "99%", 3: "99.9%", 4: "99.99%", 5: "99.999%"} {
		if got := ninesLabel(x); got != want {
			t.Errorf("ninesLabel(%v) = %q, want %q", x, got, want)
		}
	}
	for v, want := range map[float64]string{0.5: "0.5 µs", 1: "1 µs", 200: "200 µs", 1000: "1 ms", 5e4: "50 ms", 2e6: "2 s"} {
		if got := usLabel(v); got != want {
			t.Errorf("usLabel(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0: "0", 0.000123456: "0.000123", 0.511: "0.511", 1.023: "1.02", 12.345: "12.3", 555.007: "555", 1011247.09: "1,011,247", 999.6: "1,000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// samplePlaced is the sample with a placement in every phase of its redis cells.
func samplePlaced(t *testing.T) *result.Result {
	r := readSample(t)
	for i := range r.Cells {
		if r.Cells[i].Target != "redis" {
			continue
		}
		for j := range r.Cells[i].Phases {
			r.Cells[i].Phases[j].Placement = &metrics.Placement{
				Client: map[int]float64{0: 0.55, 1: 0.45}, Server: map[int]float64{0: 0.5, 1: 0.5}, SameCPU: 0.483, Samples: 5}
		}
	}
	return r
}

// TestPlacementInEveryFormat: CSV, Markdown and HTML carry the placement
// the terminal shows, and "—" where none was recorded.
func TestPlacementInEveryFormat(t *testing.T) {
	r := samplePlaced(t)
	out := renderAll(t, r)
	for _, want := range []string{",placement_same_cpu,0.483,fraction", ",placement_samples,5,count",
		",placement_client_cpu0_share,0.55,fraction", ",placement_server_cpu1_share,0.5,fraction"} {
		if !strings.Contains(out["csv"], want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	for _, l := range strings.Split(out["csv"], "\n") {
		if strings.Contains(l, ",placement_same_cpu,") && !strings.Contains(l, ",redis,") {
			t.Errorf("a placement row where none was recorded: %s", l)
		}
	}
	var mdRedis, mdOther int
	for _, l := range strings.Split(out["md"], "\n") {
		if strings.HasSuffix(l, "| 48% |") {
			mdRedis++
		} else if strings.HasSuffix(l, "| — |") && strings.Count(l, "|") == 8 {
			mdOther++
		}
	}
	if mdRedis == 0 || mdOther == 0 {
		t.Errorf("markdown cost table: %d rows with 48%%, %d with —:\n%s", mdRedis, mdOther, out["md"])
	}
	if !strings.Contains(out["html"], `<td data-m="same_cpu" data-v="0.483">48%</td>`) {
		t.Errorf("HTML lacks the same CPU cell")
	}
}

// TestTextPlacement: a "same cpu" column appears when phases recorded where
// client and server ran, and the table keeps its columns aligned.
func TestTextPlacement(t *testing.T) {
	r := samplePlaced(t)
	r.Cells = append(r.Cells, result.Cell{ID: "redis/failed", Status: result.CellFailed, Error: "boom"})
	var b bytes.Buffer
	Text(&b, r)
	out := b.String()
	start := strings.Index(out, "\ncells (")
	if start < 0 || !strings.Contains(out[start:], "same cpu: share of the time client and server ran on the same CPU") {
		t.Fatalf("no placement in the cells header:\n%s", out)
	}
	lines := strings.Split(out[start+1:], "\n")[1:]
	width := utf8.RuneCountInString(lines[0])
	var redis, others int
	for _, l := range lines {
		if l == "" || strings.Contains(l, ": ") {
			break // the warnings and errors under the table
		}
		if n := utf8.RuneCountInString(l); n != width {
			t.Errorf("row %q is %d wide, header %d", l, n, width)
		}
		f := strings.Fields(l)
		switch {
		case f[0] == "cell":
			if !strings.Contains(l, "server cpu  same cpu  disk B/op") {
				t.Errorf("header %q", l)
			}
		case strings.HasPrefix(f[0], "redis/kv"):
			redis++
			if f[12] != "48%" {
				t.Errorf("redis row %q: same cpu %q, want 48%%", l, f[12])
			}
		case f[0] == "redis/failed":
			if len(f) != 3 || f[2] != result.CellFailed {
				t.Errorf("failed row %q", l)
			}
		default:
			others++
			if f[12] != "—" {
				t.Errorf("row %q: same cpu %q, want —", l, f[12])
			}
		}
	}
	if redis != 4 || others == 0 {
		t.Errorf("%d redis rows, %d others", redis, others)
	}
}

// TestWarningLines: warnings that differ only in their figures are told once
// when three or more phases share them; others line by line.
func TestWarningLines(t *testing.T) {
	sat := func(busy string) string {
		return "the client kept " + busy + " CPUs busy on average (GOMAXPROCS 2): it may have been the bottleneck"
	}
	r := &result.Result{Cells: []result.Cell{
		{ID: "redis:none/throughput", Phases: []metrics.Phase{{Name: "set", Warnings: []string{sat("0.96")}}, {Name: "get", Warnings: []string{sat("1.02")}}}},
		{ID: "redis:rdb/throughput", Phases: []metrics.Phase{{Name: "set", Warnings: []string{sat("0.99"), "2 latencies above 60 s were recorded as 60 s"}}}},
		{ID: "redis:aof-always/throughput", Phases: []metrics.Phase{{Name: "get", Warnings: []string{"the open loop fell behind by 3 ops"}}}},
	}}
	var b strings.Builder
	warningLines(&b, r)
	got := b.String()
	want := []string{
		"  warning in 3 phases (redis:none/throughput set, redis:none/throughput get, redis:rdb/throughput set): " + sat("0.96") + " (figures of the first; each phase's are in result.json)\n",
		"  redis:rdb/throughput set: warning: 2 latencies above 60 s were recorded as 60 s\n",
		"  redis:aof-always/throughput get: warning: the open loop fell behind by 3 ops\n",
	}
	if got != strings.Join(want, "") {
		t.Errorf("warning lines:\n%s\nwant:\n%s", got, strings.Join(want, ""))
	}
}
