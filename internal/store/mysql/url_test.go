package mysql

import (
	"testing"

	"github.com/storebench/storebench/internal/store/storetest"
)

// TestCheckURL: the driver's DSN parameters are checked without
// connecting, and no error quotes the password, whatever the URL's shape.
func TestCheckURL(t *testing.T) {
	secret := storetest.Secret
	storetest.RunURLChecks(t, storetest.URLChecks{
		Check:    CheckURL,
		Validate: func(raw string) error { return Config{URL: raw, Namespace: "sbt_x"}.Validate() },
		Good: []string{
			"mysql://bench:" + secret + "@db:3306/app?tls=skip-verify&timeout=2s",
			"mariadb://bench:S3cr%2F3t@db/app",
		},
		Bad: map[string]string{
			"mysql://bench:" + secret + "@db:3306/app?tls=bogus":   "unknown config name: bogus",
			"mysql://bench:" + secret + "@db:3306/app?timeout=xyz": "invalid duration",
			"mysql://bench:" + secret + "@db:3306/a/b":             "the database name holds a '/'",
			"mysql://bench:" + secret:                              "the port is not a number",
			"postgres://bench:" + secret + "@db/app":               "want scheme mysql:// or mariadb://",
		},
		WithPassword: func(pw string) string { return "mariadb://bench:" + pw + "@db:3306/app" },
	})
}
