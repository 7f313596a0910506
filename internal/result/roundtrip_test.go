package result

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// samples are the real results of every suite that the report's golden
// tests render: the schema must read and write each one unchanged.
func samples(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../report/testdata/*-result.json*")
	if err != nil || len(paths) < 9 {
		t.Fatalf("found %d sample results in ../report/testdata (%v), want every suite's", len(paths), err)
	}
	return paths
}

// decode reads JSON into generic values, numbers kept as written.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSamplesRoundTrip: every sample result read into Result and written
// back is the same document (storebench.result/v1 unchanged: no field
// renamed, dropped or added), and each workload's summary is the same
// bytes (its fields in the same order, its numbers written the same way).
// The whole document is compared as values because Scenario is kept as a
// generic map, whose keys Go writes sorted.
func TestSamplesRoundTrip(t *testing.T) {
	summaries := 0
	for _, path := range samples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw := readSampleBytes(t, path)
			r, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			back, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(decode(t, raw), decode(t, back)) {
				t.Errorf("%s written back differs from the file:\n%s", path, back)
			}
			var doc struct {
				Cells []map[string]json.RawMessage `json:"cells"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			for i, c := range r.Cells {
				for key, v := range map[string]any{"payments": c.Payments, "sessions": c.Sessions, "durability": c.Durability} {
					if reflect.ValueOf(v).IsNil() {
						if _, ok := doc.Cells[i][key]; ok {
							t.Errorf("cell %d: %s in the file, lost on reading", i, key)
						}
						continue
					}
					summaries++
					var want bytes.Buffer
					if err := json.Compact(&want, doc.Cells[i][key]); err != nil {
						t.Fatal(err)
					}
					got, err := json.Marshal(v)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want.Bytes()) {
						t.Errorf("cell %d's %s written back differs from the file:\n got %s\nwant %s", i, key, got, want.Bytes())
					}
				}
			}
		})
	}
	// The samples hold payments, sessions and durability cells; a glob
	// that found none of them would prove nothing about their types.
	if summaries == 0 {
		t.Error("no sample cell has a workload summary")
	}
}

// readSampleBytes is a sample's JSON, gunzipped when it is stored
// compressed (.gz).
func readSampleBytes(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return raw
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	raw, err = io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
