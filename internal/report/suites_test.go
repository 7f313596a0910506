package report

import (
	"bytes"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// suiteSamples are real results of the suites whose reports have sections
// of their own, made with `storebench run SUITE --quick` (payments on
// postgres and sqlite, sessions on postgres and redis, network on postgres
// and redis, durability on every profile), beside the quick suite's
// sample-result.json and the mix result.
var suiteSamples = []string{"payments", "sessions", "durability", "network"}

func readSuiteSample(t *testing.T, suite string) *result.Result {
	t.Helper()
	r, err := result.Read("testdata/" + suite + "-result.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSuiteTextGolden: every suite's terminal summary of its sample result,
// byte for byte as it was before the reports shared one model (the goldens
// were written by the binary of that commit, 8272c79).
func TestSuiteTextGolden(t *testing.T) {
	for _, suite := range suiteSamples {
		t.Run(suite, func(t *testing.T) {
			var b bytes.Buffer
			Text(&b, readSuiteSample(t, suite))
			golden(t, suite+".txt.golden", b.Bytes())
		})
	}
}
