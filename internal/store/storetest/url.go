package storetest

import (
	"strings"
	"testing"
)

// Secret stands for a password in RunURLChecks' cases.
const Secret = "S3cr3tXyz987"

// ReservedInPasswords are what url.Parse rejects or misreads in a password
// unless percent-encoded: each makes a case of RunURLChecks.
var ReservedInPasswords = []string{"/", "#", " ", "?", "@", "%zz"}

// URLChecks are a store's URL checks and the cases to run them on.
type URLChecks struct {
	// Check is the store's CheckURL; Validate its Config's Validate for a URL.
	Check, Validate func(url string) error
	// Good URLs are accepted.
	Good []string
	// Bad URLs are refused by an error that says the string they map to.
	Bad map[string]string
	// WithPassword is a URL holding the password pw as typed.
	WithPassword func(pw string) string
}

// RunURLChecks checks a store's URL parsing without connecting: every
// option is checked, and no error quotes the password (Secret, or the
// "Wr0ng" that starts the passwords with a reserved character in them).
func RunURLChecks(t *testing.T, c URLChecks) {
	t.Helper()
	for _, raw := range c.Good {
		if err := c.Check(raw); err != nil {
			t.Errorf("CheckURL(%q) = %v", raw, err)
		}
	}
	bad := map[string]string{}
	for raw, want := range c.Bad {
		bad[raw] = want
	}
	for _, r := range ReservedInPasswords {
		bad[c.WithPassword("Wr0ng"+r+Secret)] = "percent-encode"
	}
	for raw, want := range bad {
		err := c.Check(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v, want %q", raw, err, want)
			continue
		}
		for _, e := range []error{err, c.Validate(raw)} {
			if e == nil || strings.Contains(e.Error(), Secret) || strings.Contains(e.Error(), "Wr0ng") || strings.Contains(e.Error(), "\n") {
				t.Errorf("%q: %v quotes the password, is not one line, or is no error", raw, e)
			}
		}
	}
}
