package capacity

import (
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	got, err := ParseSLO("p99<=1ms,p99.9<=5ms, p50<=200us")
	if err != nil {
		t.Fatal(err)
	}
	want := SLO{{99, time.Millisecond}, {99.9, 5 * time.Millisecond}, {50, 200 * time.Microsecond}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	if s := got.String(); s != "p99<=1ms,p99.9<=5ms,p50<=200µs" {
		t.Fatalf("String %q", s)
	}
}

// badSLOs are refused, each with one line naming the problem.
var badSLOs = map[string]string{
	"":                   "empty",
	"   ":                "empty",
	"p99":                "want p<percentile>",
	"p99<1ms":            "want p<percentile>",
	"p99<=":              "want p<percentile>",
	"99<=1ms":            "want p<percentile>",
	"p0<=1ms":            "above 0 and below 100",
	"p100<=1ms":          "want p<percentile>", // three digits
	"p00<=1ms":           "above 0 and below 100",
	"p99.99999<=1ms":     "want p<percentile>",
	"p-1<=1ms":           "want p<percentile>",
	"pNaN<=1ms":          "want p<percentile>",
	"p99<=0ms":           "at least 1µs",
	"p99<=500ns":         "at least 1µs",
	"p99<=-1ms":          "want p<percentile>",
	"p99<=61s":           "at most 1m0s",
	"p99<=1h":            "at most 1m0s",
	"p99<=1..5ms":        "not a duration",
	"p99<=1ms,p99<=2ms":  "bounded twice",
	"p99<=1ms,,p50<=1ms": "want p<percentile>",
	"p99<=1ms,":          "want p<percentile>",
	"p1<=1ms,p2<=1ms,p3<=1ms,p4<=1ms,p5<=1ms,p6<=1ms,p7<=1ms,p8<=1ms,p9<=1ms": "at most 8",
	strings.Repeat("p", 201): "at most 200",
}

func TestParseSLORefuses(t *testing.T) {
	for in, want := range badSLOs {
		_, err := ParseSLO(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSLO(%q) = %v, want one line with %q", in, err, want)
		}
	}
}

// FuzzParseSLO: ParseSLO never panics, and a valid SLO writes itself in a
// form that parses back to the same objectives.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99<=1ms,p99.9<=5ms,p50<=200us", "p99<=1ms", "p99<=10ms", "p99.99<=1.5ms", "p50<=1µs", "p99.9999<=60s"} {
		f.Add(s)
	}
	for s := range badSLOs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSLO(%q): message of several lines: %v", s, err)
			}
			return
		}
		if len(slo) == 0 || len(slo) > MaxObjectives {
			t.Fatalf("ParseSLO(%q) = %v", s, slo)
		}
		back, err := ParseSLO(slo.String())
		if err != nil {
			t.Fatalf("ParseSLO(%q) = %v, whose String %q does not parse: %v", s, slo, slo.String(), err)
		}
		if len(back) != len(slo) {
			t.Fatalf("%q -> %v -> %v", s, slo, back)
		}
		for i := range slo {
			o := slo[i]
			if back[i] != o || o.Percentile <= 0 || o.Percentile >= 100 || o.Max < MinObjective || o.Max > MaxObjective {
				t.Fatalf("%q -> %v -> %v", s, slo, back)
			}
		}
	})
}

func TestLatencyText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		290717700 * time.Nanosecond: "291ms", 6402 * time.Microsecond: "6.4ms", 850 * time.Microsecond: "850µs",
		1021313 * time.Microsecond: "1.02s", 1500 * time.Nanosecond: "1.5µs",
	} {
		if got := latencyText(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
