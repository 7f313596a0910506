package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// repeated is a run of kv at two key counts on one target, in three rounds
// whose write phases took the given seconds.
func repeated(writeS [][2]float64) *result.Result {
	r := &result.Result{Repeat: len(writeS), Targets: []result.Target{{Name: "memory"}}}
	for round, secs := range writeS {
		for i, keys := range []int64{1000, 10000} {
			id := "memory/kv/keys=" + map[int64]string{1000: "1000", 10000: "10000"}[keys]
			r.Cells = append(r.Cells, result.Cell{ID: id, Target: "memory", Workload: "kv", Repeat: round + 1, Status: result.CellOK,
				Params: map[string]any{"keys": keys},
				Phases: []metrics.Phase{{Name: "write", Ops: keys, DurationS: secs[i], ThroughputOpsS: float64(keys) / secs[i]}}})
		}
	}
	return r
}

func TestRepeatedCells(t *testing.T) {
	r := repeated([][2]float64{{0.003, 0.05}, {0.001, 0.07}, {0.002, 0.03}})
	var order []string
	for _, c := range cellsInOrder(r) {
		order = append(order, c.Label())
	}
	want := "memory/kv/keys=1000 #1,memory/kv/keys=1000 #2,memory/kv/keys=1000 #3,memory/kv/keys=10000 #1,memory/kv/keys=10000 #2,memory/kv/keys=10000 #3"
	if got := strings.Join(order, ","); got != want {
		t.Errorf("cells in order %s\nwant %s", got, want)
	}
	var b bytes.Buffer
	kvTables(&b, r)
	// The medians: 2 ms of 1, 2, 3 and 50 ms of 30, 50, 70; the row's
	// ops/s is the median repeat's at the largest N.
	var row []string
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "memory" && row == nil {
			row = f
		}
	}
	if row == nil || row[1] != "2.0" || row[2] != "50" || row[3] != "200,000" {
		t.Errorf("kv write row %q, want the median repeats: 2.0 ms, 50 ms, 200,000 ops/s:\n%s", row, b.String())
	}

	// Without --repeat, cells keep the run's order even when ids repeat.
	r.Repeat = 0
	for i := range r.Cells {
		r.Cells[i].Repeat = 0
	}
	order = order[:0]
	for _, c := range cellsInOrder(r) {
		order = append(order, c.Label())
	}
	if got := strings.Join(order, ","); !strings.HasPrefix(got, "memory/kv/keys=1000,memory/kv/keys=10000,memory/kv/keys=1000,") {
		t.Errorf("a run without repeats reordered: %s", got)
	}
}

// TestQuickChangesPrinted: a --quick run's summary says, under its first
// line, what --quick changed.
func TestQuickChangesPrinted(t *testing.T) {
	r := repeated([][2]float64{{0.001, 0.01}})
	r.Quick, r.QuickChanges = true, []string{"repeat 3→1", "keys [1000 10000 100000]→[1000 10000]"}
	var b bytes.Buffer
	Text(&b, r)
	lines := strings.Split(b.String(), "\n")
	if want := "quick: repeat 3→1; keys [1000 10000 100000]→[1000 10000]"; len(lines) < 2 || lines[1] != want {
		t.Errorf("summary's second line %q, want %q", lines[min(1, len(lines)-1)], want)
	}
	// The Markdown and HTML environment tables say it too.
	for format, write := range map[string]func(io.Writer, *result.Result) error{"md": Markdown, "html": HTML} {
		b.Reset()
		if err := write(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "repeat 3→1; keys ") {
			t.Errorf("%s report lacks the quick note", format)
		}
	}
}

// TestAskedSettingsPrinted: the targets table shows the server settings a
// target asked for as the server read them back (two PostgreSQL 18
// targets differing in io_method), and no such column when none asked.
func TestAskedSettingsPrinted(t *testing.T) {
	pg := func(name, method string) result.Target {
		tg := result.Target{Name: name, Store: "postgres", Managed: true, Options: map[string]string{"io_method": method, "design": "unlogged"}}
		tg.Version, tg.Settings = "18.6", map[string]string{"io_method": method, "io_workers": "3"}
		return tg
	}
	r := &result.Result{Targets: []result.Target{pg("postgres-18", "worker"), pg("postgres-18-sync", "sync"), {Name: "memory", Store: "memory"}}}
	var b bytes.Buffer
	targetTable(&b, r)
	for _, want := range []string{"settings asked, as read back", "io_method=worker", "io_method=sync"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("targets table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	targetTable(&b, &result.Result{Targets: []result.Target{{Name: "memory", Store: "memory"}}})
	if strings.Contains(b.String(), "settings asked") {
		t.Errorf("a column of settings no target asked for:\n%s", b.String())
	}
}
