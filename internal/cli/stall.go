package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
)

// parseStall reads --stall AFTER:FOR, e.g. 1s:500ms.
func parseStall(v string) (scenario.Stall, error) {
	a, f, ok := strings.Cut(v, ":")
	after, err1 := time.ParseDuration(strings.TrimSpace(a))
	dur, err2 := time.ParseDuration(strings.TrimSpace(f))
	if !ok || err1 != nil || err2 != nil {
		return scenario.Stall{}, fmt.Errorf("want AFTER:FOR, e.g. 1s:500ms (stop the server 1 s into each measured phase for 500 ms), got %q", v)
	}
	switch {
	case dur <= 0:
		return scenario.Stall{}, fmt.Errorf("FOR must be positive, got %v", dur)
	case after < 0:
		return scenario.Stall{}, errors.New("AFTER must not be negative")
	}
	return scenario.Stall{After: scenario.Duration(after), For: scenario.Duration(dur)}, nil
}

// stallHook observes each phase as inst.Probe does and stalls the server in it.
func stallHook(ctx context.Context, inst *target.Instance, s target.Stall) func(string) load.Probe {
	return func(phase string) load.Probe {
		return inst.StallProbe(ctx, s, inst.Probe(phase))
	}
}

// resumeServer continues a managed server that a stall may have stopped.
func resumeServer(inst *target.Instance) {
	if inst.Server != nil {
		_ = inst.Server.Resume()
	}
}
