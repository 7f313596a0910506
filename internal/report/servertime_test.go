package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

func TestServerTimeText(t *testing.T) {
	r := &result.Result{Cells: []result.Cell{
		{ID: "memory/kv/1000", Phases: []metrics.Phase{{Name: "write", LatencyUs: metrics.Latency{Mean: 1}}}},
		{ID: "postgres/kv/1000", Phases: []metrics.Phase{
			{Name: "write", LatencyUs: metrics.Latency{Mean: 800}, ServerTime: &metrics.ServerTimeSummary{
				Source: "pg_stat_statements", Calls: 1000, MeanUs: 40, PerCallUs: 40, ClientOverheadUs: 760,
				Ops: map[string]metrics.ServerOpTime{"set": {Calls: 1000, MeanUs: 40}}}},
			{Name: "read", LatencyUs: metrics.Latency{Mean: 50}, ServerTime: &metrics.ServerTimeSummary{
				Source: "pg_stat_statements", Calls: 1000, MeanUs: 5, PerCallUs: 5, ClientOverheadUs: 45,
				Ops: map[string]metrics.ServerOpTime{"get": {Calls: 990, MeanUs: 5}, "delete": {Calls: 10, MeanUs: 5}}}},
		}},
		{ID: "redis/kv/1000", Phases: []metrics.Phase{
			{Name: "read", LatencyUs: metrics.Latency{Mean: 30}, ServerTime: &metrics.ServerTimeSummary{
				Source: "INFO commandstats (whole server)", Calls: 1000, MeanUs: 0.3, PerCallUs: 0.3, ClientOverheadUs: 29.7,
				Ops: map[string]metrics.ServerOpTime{"get": {Calls: 1000, MeanUs: 0.3}}}},
		}},
	}}
	var b bytes.Buffer
	ServerTimeText(&b, r)
	out := b.String()
	t.Log("\n" + out)
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"postgres/kv/1000 write 1000 800 40.0 760 95% set 40.0 [1]",
		"postgres/kv/1000 read 1000 50.0 5.0 45.0 90% delete 5.0, get 5.0 [1]",
		"redis/kv/1000 read 1000 30.0 0.3 29.7 99% get 0.3 [2]",
		"[1] pg_stat_statements",
		"[2] INFO commandstats (whole server)",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "memory") {
		t.Error("a phase without server time is listed")
	}
	b.Reset()
	ServerTimeText(&b, &result.Result{Cells: r.Cells[:1]})
	if b.Len() != 0 {
		t.Errorf("no server time, yet: %q", b.String())
	}
}
