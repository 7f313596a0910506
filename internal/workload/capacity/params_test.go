package capacity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

func TestParamsValidate(t *testing.T) {
	slo := SLO{{99, time.Millisecond}}
	ok := Params{SLOs: []SLO{slo}}.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := map[string]func(p *Params){
		"give an SLO":                 func(p *Params) { p.SLOs = nil },
		"at most 4":                   func(p *Params) { p.SLOs = []SLO{slo, slo, slo, slo, slo} },
		"connections":                 func(p *Params) { p.Connections = -1 },
		"start rate -1":               func(p *Params) { p.StartRate = -1 },
		"max rate 1e+09 ops/s":        func(p *Params) { p.MaxRate = 1e9 },
		"want min rate <= start rate": func(p *Params) { p.MinRate = 5000 },
		"growth 1.01":                 func(p *Params) { p.Growth = 1.01 },
		"precision 0.001":             func(p *Params) { p.Precision = 0.001 },
		"ci share 2":                  func(p *Params) { p.CIShare = 2 },
		"steps of 500ms":              func(p *Params) { p.MinStep = 500 * time.Millisecond },
		"steps of 2s to 1h0m0s":       func(p *Params) { p.MaxStep = time.Hour },
		"max steps 2":                 func(p *Params) { p.MaxSteps = 2 },
		"error budget 0.9":            func(p *Params) { p.ErrorBudget = 0.9 },
		"need":                        func(p *Params) { p.Need = -5 },
		"must increase":               func(p *Params) { p.USLClients = []int{1, 4, 2} },
		"USL clients":                 func(p *Params) { p.USLClients = []int{0} },
		"USL phases of 1h0m0s":        func(p *Params) { p.USLClients, p.USLDuration = []int{1}, time.Hour },
	}
	for want, change := range bad {
		p := ok
		change(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "capacity: ") {
				t.Errorf("%s: line %q", want, line)
			}
		}
	}
	// Run refuses bad parameters before running anything.
	ran := false
	step := func(context.Context, StepRequest) (metrics.Phase, error) { ran = true; return metrics.Phase{}, nil }
	_, _, err := Run(context.Background(), Drive{Step: step}, Params{SLOs: []SLO{slo}, Growth: 100})
	if err == nil || ran {
		t.Fatalf("Run with growth 100: %v", err)
	}
}

// A scenario's growth reaches the search (the capacity suite's quick
// section ramps by 4), and an absurd one is refused with its bounds.
func TestSearchGrowthField(t *testing.T) {
	p, err := Search{SLO: []string{"p99<=10ms"}, Growth: 4}.Params(8, nil)
	if err != nil || p.Growth != 4 {
		t.Fatalf("growth 4: %v, %v", p.Growth, err)
	}
	if p, err := (Search{SLO: []string{"p99<=10ms"}}).Params(8, nil); err != nil || p.Growth != 2 {
		t.Fatalf("no growth: %v, %v; want the default 2", p.Growth, err)
	}
	if _, err := (Search{SLO: []string{"p99<=10ms"}, Growth: 20}).Params(8, nil); err == nil || !strings.Contains(err.Error(), "growth 20: want 1.1 to 10") {
		t.Fatalf("growth 20: %v", err)
	}
}
