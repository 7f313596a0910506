package cacheaside

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/replay"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

// TestTraceDrivesTheApplication: with a trace, the application's requests
// are the trace's, in its order: over one pass of the sample trace on one
// client, the reads are exactly its gets and the writes its other
// requests (a key each), and a cache in front answers some of the reads.
func TestTraceDrivesTheApplication(t *testing.T) {
	tr := replay.Params{Trace: "sample:csv"}
	r, err := tr.Open()
	if err != nil {
		t.Fatal(err)
	}
	var gets, others int64
	for {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case q.Op == trace.OpNone:
		case q.Op == trace.OpGet:
			gets += int64(len(q.Keys))
		default:
			others += int64(len(q.Keys))
		}
	}
	r.Close()
	if gets == 0 || others == 0 {
		t.Fatalf("sample trace: %d gets, %d others", gets, others)
	}
	e := Env{DB: workloadtest.Openers["memory"](t), Cache: workloadtest.Openers["memory"](t)}
	s := run(t, e, Params{
		Keyspace: workload.Keyspace{Keys: 1000, ValueSize: 64}, TTL: dur(time.Hour), Trace: tr.Trace,
		Load: workload.Load{Clients: 1, Ops: gets + others},
	})
	if s.Reads != gets || s.Writes != others {
		t.Errorf("reads %d, writes %d: want the trace's %d gets and %d other requests", s.Reads, s.Writes, gets, others)
	}
	if s.Hits == 0 || s.HitRatio <= 0 {
		t.Errorf("hits %d: a zipfian trace's reads hit the cache", s.Hits)
	}
	if !strings.Contains(strings.Join(s.Notes, " "), "requests from the trace sample:csv") || s.Params.Trace != "sample:csv" {
		t.Errorf("notes %q, params %+v: the trace is not said", s.Notes, s.Params)
	}
	if err := (Params{Keyspace: workload.Keyspace{Keys: 10}, Trace: "/nonexistent.csv"}).Validate(); err == nil {
		t.Error("a missing trace validated")
	}
}
