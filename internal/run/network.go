package run

import (
	"context"
	"fmt"
	"maps"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/target"
)

// networkMechanism checks, once per run and only when a cell asks for a
// network, how the delay can be applied: want is --net-mechanism
// (netem.Choose).
func networkMechanism(ctx context.Context, cells []cell, want string) (netem.Mechanism, error) {
	for _, c := range cells {
		if c.Net != nil {
			return netem.Choose(ctx, want)
		}
	}
	return netem.Mechanism{}, nil
}

// setNetwork puts the cell's target behind the cell's network (or reaches
// it directly) and returns the cell's parameters with what was measured.
func setNetwork(ctx context.Context, inst *target.Instance, c cell, logf func(string, ...any)) (map[string]any, error) {
	n, err := inst.SetNetwork(ctx, c.Net)
	if err != nil {
		if c.Net == nil {
			return c.params, fmt.Errorf("reach %s directly again: %w", inst.Spec.Label(), err)
		}
		return c.params, fmt.Errorf("network %s: %w", c.Net, err)
	}
	if n == nil {
		return c.params, nil
	}
	if n.ProbeError != "" {
		logf("  network %s via %s; round trip not measured: %s", n.Asked, n.Mechanism, n.ProbeError)
	} else {
		logf("  network %s via %s: measured %v (direct %v, calibration -%v)", n.Asked, n.Mechanism, n.Measured, n.Direct, n.Offset)
	}
	p := maps.Clone(c.params)
	maps.Copy(p, n.Params())
	return p, nil
}
