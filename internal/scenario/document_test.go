package scenario

import (
	"strings"
	"testing"
)

// A file with a second YAML document is refused, naming where the second
// one starts: only the first ran (issue 15, finding 9).
func TestSecondDocumentIsRefused(t *testing.T) {
	const one = "name: t\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10]}\n"
	for src, want := range map[string]string{
		one + "---\nname: u\ntargets: [redis]\nworkloads:\n  - {type: kv}\n": "t.yaml:5: a second YAML document (after ---): a scenario file holds one scenario",
		one + "---\n---\nname: u\n": "t.yaml:6: a second YAML document",
		one + "---\nname: [\n":      "t.yaml:",
	} {
		_, err := Parse("t.yaml", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
	// A leading marker, a closing one and an empty trailing document hold one scenario.
	for _, src := range []string{"---\n" + one, one + "...\n", one + "---\n", one + "---\n# nothing more\n"} {
		if _, err := Parse("t.yaml", strings.NewReader(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}
