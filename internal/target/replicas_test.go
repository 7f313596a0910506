package target

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store/postgres"
)

func replicaRegistry() Registry {
	r := testRegistry()
	return append(r, Kind{Name: "postgres-replicas", Server: server.Postgres, Cluster: true, EveryNode: true, Schemes: []string{postgres.ReplicasScheme},
		Description: "a PostgreSQL primary and its streaming replicas: writes to the primary", CheckURL: postgres.CheckReplicasURL,
		Options: map[string]string{"design": "", "reads": ""}, ServerOptions: map[string]string{"replicas": ""},
		CheckOptions: func(o map[string]string) error {
			if err := CheckClusterOptions(server.Postgres, o); err != nil {
				return err
			}
			return postgres.CheckReplicaOptions(o["design"], o["reads"])
		}})
}

// TestParseReplicas: a replica set's shape reads as a cluster's, its label
// tells read policies apart and parses back, a list keeps its commas, and
// a managed set has one replica unless told.
func TestParseReplicas(t *testing.T) {
	r := replicaRegistry()
	for _, tc := range []struct {
		in, options  string
		wantReplicas int
	}{
		{"postgres-replicas", "map[]", 1},
		{"postgres-replicas:replicas=2,reads=any", "map[reads:any replicas:2]", 2},
		{"postgres-replicas:async-commit,reads=primary", "map[reads:primary]", 1},
	} {
		spec, err := r.Parse(tc.in)
		if err != nil || fmt.Sprint(spec.Options) != tc.options {
			t.Errorf("Parse(%q) = %+v, %v; want options %s", tc.in, spec, err, tc.options)
			continue
		}
		if back, err := r.Parse(spec.Label()); err != nil || back.Label() != spec.Label() {
			t.Errorf("label %q does not parse back: %+v, %v", spec.Label(), back, err)
		}
		k, _ := r.Lookup("postgres-replicas")
		if co := k.ClusterOptionsFor(spec); co.Replicas != tc.wantReplicas || co.Primaries != 0 {
			t.Errorf("%q: cluster options %+v, want %d replicas", tc.in, co, tc.wantReplicas)
		}
	}
	if got := r.SplitList("postgres-replicas:replicas=2,reads=any,redis,postgres-replicas"); len(got) != 3 || got[0] != "postgres-replicas:replicas=2,reads=any" {
		t.Errorf("SplitList: %q", got)
	}
	for in, wantErr := range map[string]string{
		"postgres-replicas:replicas=0":         "replicas=0: want 1 to 8",
		"postgres-replicas:replicas=9":         "replicas=9: want 1 to 8",
		"postgres-replicas:reads=nearest":      "unknown read policy in reads=… (valid: replicas, primary, any)",
		"postgres-replicas:reads=hunter2;":     "wants a number or a word",
		"postgres:replicas=1":                  "store postgres is one server; write postgres-replicas:replicas=… (a PostgreSQL primary and its streaming replicas)",
		"mariadb:reads=any":                    "store mariadb cannot have reads (stores that can: postgres-replicas)",
		"redis-cluster:reads=any":              `unknown option "reads" for store redis-cluster`,
		"postgres-replicas://u:hunter2@h:1/db": "one host",
	} {
		_, err := r.Parse(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Parse(%q) error = %v, want %q", in, err, wantErr)
		}
	}
}

// TestSummarizeLag: the median and maximum over the samples, the worst
// replica per sample; samples the primary could not time count for the
// bytes only; the fewest streaming replicas is kept.
func TestSummarizeLag(t *testing.T) {
	if summarizeLag(nil, 1, 0) != nil {
		t.Error("a lag without samples")
	}
	ms := time.Millisecond
	l := summarizeLag([]lagSample{
		{streaming: 2, timed: true, replay: 3 * ms, flush: ms, bytes: 100},
		{streaming: 1, timed: false, bytes: 900},
		{streaming: 2, timed: true, replay: 1 * ms, flush: ms, bytes: 0},
		{streaming: 2, timed: true, replay: 9 * ms, flush: 2 * ms, bytes: 300},
	}, 2, 5*ms)
	if l.Samples != 4 || l.TimedSamples != 3 || l.Streaming != 1 || l.Replicas != 2 || l.CatchUpMs != 5 {
		t.Errorf("counts %+v", *l)
	}
	if l.ReplayMs.P50 != 3 || l.ReplayMs.Max != 9 || l.FlushMs.Max != 2 || l.Bytes.P50 != 100 || l.Bytes.Max != 900 {
		t.Errorf("figures %+v", *l)
	}
}
