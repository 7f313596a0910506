package scenario

import (
	"strings"
	"testing"
)

// TestYAMLErrorsNeverQuoteAPassword: a URL left unquoted in YAML is read by
// the YAML grammar before storebench sees it. A password holding ": " makes
// the target a mapping whose key holds half of it, and a URL where a number
// belongs is quoted whole by the YAML decoder; neither may be echoed.
func TestYAMLErrorsNeverQuoteAPassword(t *testing.T) {
	for name, doc := range map[string]string{
		"colon space in password": "targets:\n  - postgres://bench:S3cr3tX: yz987@db/app\nworkloads: [{type: kv}]\n",
		"url where a number goes": "seed: postgres://bench:S3cr3tXyz987@db/app\ntargets: [memory]\nworkloads: [{type: kv}]\n",
		"url as a field name":     "targets:\n  - {postgres://bench:S3cr3tXyz987@db: 1}\nworkloads: [{type: kv}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("s.yaml", strings.NewReader(doc))
			if err == nil {
				t.Fatal("parsed")
			}
			for _, secret := range []string{"S3cr3t", "yz987", "Xyz987"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes the password: %v", err)
				}
			}
			if !strings.Contains(err.Error(), "s.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}
