package target_test

import (
	"fmt"
	"github.com/storebench/storebench/internal/workload/all"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
)

// TestScenarioTargetsNeverEchoAPassword: a scenario file's targets flow
// through the same parsing as --stores, in both of a target's forms, and a
// bad URL parameter is refused by Validate, before any work.
func TestScenarioTargetsNeverEchoAPassword(t *testing.T) {
	reg := target.TestRegistry()
	for _, shape := range target.PasswordShapes {
		for _, entry := range []string{
			fmt.Sprintf("%q", shape),
			fmt.Sprintf("{url: %q}", shape),
			fmt.Sprintf("{store: postgres, url: %q}", shape),
		} {
			yaml := "name: x\ntargets:\n  - " + entry + "\nworkloads:\n  - type: kv\n"
			s, err := scenario.Parse("x.yaml", strings.NewReader(yaml))
			if err == nil {
				s.Defaults()
				_, err = s.Resolve(reg, all.Types(), false)
			}
			if err == nil || strings.Contains(err.Error(), target.Secret) || strings.Contains(err.Error(), "Wr0ng") || !strings.HasPrefix(err.Error(), "x.yaml:3: ") {
				t.Errorf("targets: [%s]: %v, want an error at x.yaml:3 without the password", entry, err)
			}
		}
	}
	yaml := "name: x\ntargets:\n  - url: \"redis://:" + target.Secret + "@127.0.0.1:6379?protocol=9\"\nworkloads:\n  - type: kv\n"
	s, err := scenario.Parse("x.yaml", strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if _, err := s.Resolve(reg, all.Types(), false); err == nil || !strings.Contains(err.Error(), "parameter protocol") || strings.Contains(err.Error(), target.Secret) {
		t.Errorf("protocol=9 in a scenario: %v", err)
	}
}
