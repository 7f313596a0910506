package sessions_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/kinds"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/sessions"
	"github.com/storebench/storebench/suites"
)

// TestSuite: the suite's sessions sections decode strictly, plan into valid
// parameters on every store, full and quick, and the quick run stays well
// under five minutes of measured time.
func TestSuite(t *testing.T) {
	b, ok := suites.Open("sessions")
	if !ok {
		t.Fatal("no sessions suite")
	}
	type load struct {
		Clients   int           `yaml:"clients"`
		Rate      float64       `yaml:"rate"`
		Ops       int64         `yaml:"ops"`
		Duration  time.Duration `yaml:"duration"`
		WarmupOps int64         `yaml:"warmup_ops"`
	}
	var doc struct {
		Targets   []string `yaml:"targets"`
		Workloads []struct {
			Name     string    `yaml:"name"`
			Sessions yaml.Node `yaml:"sessions"`
			Load     load      `yaml:"load"`
		} `yaml:"workloads"`
		Quick struct {
			Ops      int64         `yaml:"ops"`
			Duration time.Duration `yaml:"duration"`
			Sessions yaml.Node     `yaml:"sessions"`
		} `yaml:"quick"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// strict decodes the sections in turn into one spec, each over the
	// last, as the scenario lays its quick section over an entry.
	strict := func(sections ...*yaml.Node) sessions.Section {
		var s sessions.Section
		for _, n := range sections {
			var out bytes.Buffer
			if err := yaml.NewEncoder(&out).Encode(n); err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(&out)
			dec.KnownFields(true)
			if err := dec.Decode(&s); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	var quickB time.Duration
	var quickInserts int64
	phases := map[string]bool{}
	for _, w := range doc.Workloads {
		spec, quick := strict(&w.Sessions), strict(&w.Sessions, &doc.Quick.Sessions)
		phases[spec.Phase] = true
		full := workload.Load{Clients: w.Load.Clients, Rate: w.Load.Rate, Ops: w.Load.Ops, Duration: w.Load.Duration}
		if err := spec.Check(42, full); err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		q := full
		q.Ops, q.Duration = doc.Quick.Ops, doc.Quick.Duration // as the scenario's quick section does
		for _, store := range doc.Targets {
			for _, replica := range []bool{false, true} {
				kind, ok := kinds.All().Lookup(strings.SplitN(store, ":", 2)[0])
				if !ok {
					t.Fatalf("the suite's target %q is no store kind", store)
				}
				for _, c := range spec.Cells(sessions.KindOf(kind), replica) {
					if _, err := sessions.PlanParams(spec, c, 42, full); err != nil {
						t.Errorf("%s on %s: %v", w.Name, store, err)
					}
					p, err := sessions.PlanParams(quick, c, 42, q)
					if err != nil {
						t.Errorf("%s on %s (quick): %v", w.Name, store, err)
						continue
					}
					if replica {
						continue
					}
					if p.Phase == sessions.PhaseInsert {
						quickInserts += p.Inserts
						continue
					}
					tm := p.Timing()
					quickB += tm.Warmup + tm.Duration
					// --quick's TTL is 2 s (30 min / 900): two of Memcached's
					// whole-second expiry units, and measured twice over.
					if tm.TTL < 1900*time.Millisecond || tm.Duration < 2*tm.TTL-time.Millisecond {
						t.Errorf("quick %s: TTL %v, measured %v", c.Design, tm.TTL, tm.Duration)
					}
				}
			}
		}
	}
	if !phases[sessions.PhaseInsert] || !phases[sessions.PhaseChurn] {
		t.Errorf("phases %v", phases)
	}
	// Phase A's synchronous variants cost an fsync each (a few ms here):
	// 2 × 5000 of them, the others a tenth of a millisecond.
	if quickB > 150*time.Second || quickInserts > 6*5000 {
		t.Errorf("quick: phase B %v of load, %d inserts", quickB, quickInserts)
	}
}

func TestParseDesign(t *testing.T) {
	d, err := sessions.ParseDesign("naive, persistence=logged ,fillfactor=70")
	if err != nil {
		t.Fatal(err)
	}
	if d.Knobs["persistence"] != "logged" || d.Knobs["fillfactor"] != "70" || d.Knobs["id"] != "int" || !d.KeepaliveOnRead() {
		t.Errorf("knobs: %v", d.Knobs)
	}
	tuned, _ := sessions.ParseDesign("tuned")
	sd := tuned.Store(schema.Timing{TTL: time.Minute, RefreshBelow: 40 * time.Second})
	if sd.Unlogged || sd.IDType != "bigint" || sd.IDCache != 100 || sd.PayloadType != "text" || sd.ExpiresType != "timestamp" ||
		!sd.AsyncCommit || !sd.Function || sd.ExpiresIndex || sd.Fillfactor != 70 || !sd.TableAutovacuum || sd.AutovacuumMaxWorkers != 6 ||
		sd.Constraints || sd.KeepaliveOnRead || sd.RefreshBelow != 40*time.Second {
		t.Errorf("tuned: %+v", sd)
	}
	for _, bad := range []string{"", "fast", "naive,colour=red", "tuned,fillfactor=5", "tuned,persistence", "tuned,id_cache=0", "naive,payload=xml"} {
		if _, err := sessions.ParseDesign(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Each knob of the spec switches on its own from either preset.
	for _, k := range sessions.Knobs {
		for _, preset := range sessions.Presets {
			v := k.Tuned
			if preset == "tuned" {
				v = k.Naive
			}
			if v == "" {
				continue
			}
			d, err := sessions.ParseDesign(preset + "," + k.Name + "=" + v)
			if err != nil {
				t.Fatal(err)
			}
			base, _ := sessions.ParseDesign(preset)
			for name, val := range d.Knobs {
				if name != k.Name && val != base.Knobs[name] {
					t.Errorf("%s,%s=%s changed %s too", preset, k.Name, v, name)
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	p := sessions.Defaults()
	p.TimeScale = 0.0001 // TTL 0.18 s
	if err := p.Validate(); err == nil {
		t.Error("a TTL below 1 s was accepted")
	}
	p = sessions.Defaults()
	p.Design, p.Replica = "naive", true
	if err := p.Validate(); err == nil {
		t.Error("per-read keepalive on a replica was accepted")
	}
	p = sessions.Defaults()
	p.Phase, p.Variant = sessions.PhaseInsert, "bogus"
	if err := p.Validate(); err == nil {
		t.Error("an unknown variant was accepted")
	}
}
