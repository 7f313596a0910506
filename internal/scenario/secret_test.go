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

// TestURLsAsNamesAreNeverQuoted (issue 28): a URL where a name belongs —
// the scenario's, a target's, a workload's, in a workload's targets list
// (directly or through a YAML alias) or in cache-aside's caches — is refused
// without quoting it: a password may sit in it in a shape no redaction finds.
func TestURLsAsNamesAreNeverQuoted(t *testing.T) {
	const url = `"redis://a/b?c#S3cr3tXyz987 d%zz@127.0.0.1:1"`
	for name, doc := range map[string]string{
		"workload targets":  "targets: [memory]\nworkloads:\n  - {type: kv, targets: [" + url + "]}\n",
		"through an alias":  "targets:\n  - {name: t, url: &u " + url + "}\nworkloads:\n  - {type: kv, targets: [*u]}\n",
		"cache-aside cache": "targets: [memory]\nworkloads:\n  - type: cache-aside\n    cache_aside: {caches: [none, " + url + "], keys: 10}\n",
		"scenario name":     "name: " + url + "\ntargets: [memory]\nworkloads: [{type: kv}]\n",
		"target name":       "targets:\n  - {name: " + url + ", store: memory}\nworkloads: [{type: kv}]\n",
		"workload name":     "targets: [memory]\nworkloads:\n  - {type: kv, name: " + url + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Parse("s.yaml", strings.NewReader(doc))
			if err == nil {
				err = validate(s, registry())
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "S3cr3t") {
				t.Errorf("error quotes the password: %v", err)
			}
		})
	}
}
