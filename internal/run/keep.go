package run

import (
	"fmt"
	"reflect"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
)

// keepData says whether the run leaves its targets' data in place (--keep,
// the scenario's keep, or a payments section's keep), and refuses, before
// any work, a target whose data cannot outlive the run. Kept, payments
// tables are not dropped either.
func keepData(reg target.Registry, r *scenario.Resolved, flag bool) (bool, error) {
	s := r.Scenario
	origin := "--keep"
	switch {
	case flag:
	case s.Keep:
		origin = s.Source + ": keep"
	case r.KeepsData():
		origin = s.Source + ": payments keep"
	default:
		return false, nil
	}
	for _, t := range s.Targets {
		k, _ := reg.Lookup(t.Spec.Store)
		if !t.Spec.Managed() {
			continue
		}
		// Kept, a managed server's data dir would be gigabytes nobody can
		// query without starting that server by hand on storebench's
		// settings: keeping is for a server the user runs and queries.
		var why string
		switch {
		case k.Server != "":
			why = "a managed server, removed with its data dir after the run; to keep the data, name a server by URL"
			if scheme := urlScheme(reg, k); scheme != "" {
				why += fmt.Sprintf(" (%s://…)", scheme)
			}
		case len(k.Schemes) > 0:
			why = fmt.Sprintf("in the run's scratch dir, removed after the run; to keep the data, name one by URL (%s:///path)", k.Schemes[0])
		default:
			why = "in storebench's own memory: nothing of it outlives the run"
		}
		return false, inputf("%s: target %s is %s", origin, t.Spec.Label(), why)
	}
	return true, nil
}

// urlScheme is the scheme of a URL that reaches a server of kind k: its
// own, else that of the kind whose store k opens (valkey has none: a
// redis:// URL reaches a Valkey server as the redis store); "" when none.
func urlScheme(reg target.Registry, k target.Kind) string {
	if len(k.Schemes) > 0 {
		return k.Schemes[0]
	}
	if k.Prototype == nil {
		return ""
	}
	for _, c := range reg {
		if len(c.Schemes) > 0 && reflect.TypeOf(c.Prototype) == reflect.TypeOf(k.Prototype) {
			return c.Schemes[0]
		}
	}
	return ""
}

func specsOf(targets []scenario.Target) []target.Spec {
	specs := make([]target.Spec, len(targets))
	for i, t := range targets {
		specs[i] = t.Spec
	}
	return specs
}
