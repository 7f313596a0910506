package run

import (
	"context"
	"errors"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/target"
)

// preflight checks everything a run needs before any work: binaries of
// managed servers, reachability of external ones, writable directories.
func preflight(ctx context.Context, reg target.Registry, s *scenario.Scenario, args target.StartArgs) ([]scenario.Target, []result.Skipped, error) {
	var keep []scenario.Target
	var skipped []result.Skipped
	for _, t := range s.Targets {
		k, _ := reg.Lookup(t.Spec.Store)
		switch {
		case t.Spec.Managed() && k.Server != "":
			if err := server.Check(k.Server, k.ServerOptionsFor(t.Spec, args)); err != nil {
				var missing *server.MissingError
				if !errors.As(err, &missing) {
					return nil, nil, inputf("target %s: %v", t.Spec.Label(), err)
				}
				if s.SkipUnavailable {
					skipped = append(skipped, result.Skipped{Target: t.Spec.Label(), Reason: err.Error()})
					continue
				}
				return nil, nil, inputf("target %s: %v", t.Spec.Label(), err)
			}
		case !t.Spec.Managed():
			if err := target.Probe(ctx, k, t.Spec.URL); err != nil {
				return nil, nil, inputf("target %s: %v", t.Spec.Label(), err)
			}
		}
		keep = append(keep, t)
	}
	if len(keep) == 0 {
		return nil, skipped, inputf("no target of %s can run here", s.Name)
	}
	return keep, skipped, nil
}
