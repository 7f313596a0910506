package postgres

import (
	"testing"

	"github.com/storebench/storebench/internal/store/storetest"
)

// TestCheckURL: every connection option pgx reads is checked without
// connecting, and no error quotes the password, whatever the URL's shape.
func TestCheckURL(t *testing.T) {
	secret := storetest.Secret
	storetest.RunURLChecks(t, storetest.URLChecks{
		Check:    CheckURL,
		Validate: func(raw string) error { return Config{URL: raw, Namespace: "sbt_x"}.Validate() },
		Good: []string{
			"postgres://bench:" + secret + "@db:5432/app",
			"postgresql://bench:S3cr%2F3t@db/app?sslmode=disable&connect_timeout=3",
			"postgres://db/app?password=" + secret + "&sslmode=require",
		},
		Bad: map[string]string{
			"postgres://bench:" + secret + "@db:5432/app?sslmode=bogus":                        "sslmode is invalid",
			"postgres://bench:" + secret + "@db:5432/app?connect_timeout=soon":                 "connect_timeout",
			"postgres://bench:" + secret + "@db:5432/app?target_session_attrs=any-old":         "target_session_attrs",
			"postgres://bench:" + secret + "@db/app?sslmode=verify-full&sslrootcert=/nonexist": "/nonexist",
			"postgres://bench:" + secret + "@db:99999/app":                                     "invalid port",
			"postgres://db/app?password=Wr0ng%zz" + secret:                                     "percent-encode",
			"postgres://db/app?password=Wr0ng#" + secret:                                       "percent-encode",
			"host=db password=" + secret + " sslmode=bogus":                                    "sslmode is invalid",
			"host=db password='" + secret + " x":                                               "unterminated quoted string",
		},
		WithPassword: func(pw string) string { return "postgres://bench:" + pw + "@db:5432/app" },
	})
}
