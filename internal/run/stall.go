package run

import (
	"context"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/target"
)

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
