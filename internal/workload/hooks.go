package workload

import (
	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
)

// Hooks let the caller watch and annotate a workload's phases without the
// workload knowing about terminals or servers.
type Hooks struct {
	// OnSecond receives each completed second of a phase (live progress).
	OnSecond func(phase string, s metrics.Second)
	// Probe returns an observer for a phase, e.g. one that samples the
	// server's CPU and disk writes over the measured part; nil for none.
	Probe func(phase string) load.Probe
}

// Apply fills c's callbacks for the phase named c.Name.
func (h Hooks) Apply(c load.Config) load.Config {
	if h.OnSecond != nil {
		name := c.Name
		c.OnSecond = func(s metrics.Second) { h.OnSecond(name, s) }
	}
	if h.Probe != nil {
		c.Probe = h.Probe(c.Name)
	}
	return c
}
