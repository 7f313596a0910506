package result

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestCreateNeverReplacesAResult: runs that start in the same second (two
// quick runs back to back, shards or CI jobs sharing --out) each get a
// directory of their own; the first version named every one by the second,
// so the last writer replaced the others' result.json.
func TestCreateNeverReplacesAResult(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results")
	const runs = 16
	started := time.Date(2026, 11, 24, 6, 13, 44, 0, time.UTC)
	paths := make([]string, runs)
	ids := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &Result{Schema: Schema, ID: started.Format("20060102T150405Z"), Seed: uint64(i), Status: StatusComplete, StartedAt: started}
			w, err := Create(out, r)
			if err != nil {
				t.Error(err)
				return
			}
			paths[i], ids[i] = w.Path(), r.ID
		}()
	}
	wg.Wait()
	found, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(found) != runs {
		t.Fatalf("%d runs started at once left %d results: %v", runs, len(found), found)
	}
	for i, p := range paths {
		r, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Seed != uint64(i) {
			t.Errorf("%s holds run %d's result, want run %d's", p, r.Seed, i)
		}
		if filepath.Base(filepath.Dir(p)) != r.ID || ids[i] != r.ID {
			t.Errorf("%s: result id %q does not name its directory", p, r.ID)
		}
	}
	sort.Strings(ids)
	if ids[0] != "20261124T061344Z" || ids[1] != "20261124T061344Z-10" {
		t.Errorf("names %v: want the start second, then -2, -3, …", ids)
	}
}

// TestCreateLeavesOthersAlone: a directory already there (a previous run's,
// or anything else) is never written into.
func TestCreateLeavesOthersAlone(t *testing.T) {
	out := t.TempDir()
	old := filepath.Join(out, "20261124T061344Z")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, &Result{Schema: Schema, ID: "20261124T061344Z"})
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Dir(w.Path()); got != old+"-2" {
		t.Errorf("result in %s, want %s-2", got, old)
	}
	if ents, _ := os.ReadDir(old); len(ents) != 0 {
		t.Errorf("Create wrote into an existing directory: %v", ents)
	}
}
