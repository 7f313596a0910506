package redis

import (
	"testing"

	"github.com/storebench/storebench/internal/store/storetest"
)

// TestCheckURL: every parameter is checked without connecting (rueidis
// ignores unknown ones and any protocol but 2), and no error quotes the
// password, whatever the URL's shape.
func TestCheckURL(t *testing.T) {
	secret := storetest.Secret
	storetest.RunURLChecks(t, storetest.URLChecks{
		Check:    CheckURL,
		Validate: func(raw string) error { return Config{URL: raw, Namespace: "sbt_x"}.Validate() },
		Good: []string{
			"redis://:" + secret + "@h:6379/2",
			"redis://u:S3cr%2F3t@h?protocol=2&db=1",
			"rediss://h:6380?skip_verify=true&protocol=3",
			"unix:///tmp/redis.sock",
		},
		Bad: map[string]string{
			"redis://:" + secret + "@h:6379?protocol=9":       "protocol: want 2 (RESP2) or 3 (RESP3)",
			"redis://:" + secret + "@h:6379?db=-1":            "db: want a database number",
			"redis://:" + secret + "@h:6379/x":                "invalid database number",
			"redis://:" + secret + "@h:6379?dial_timeout=1s":  "storebench bounds connecting",
			"redis://:" + secret + "@h:6379?client_cache=1":   "without a client-side cache",
			"redis://:" + secret + "@h:6379?skip_verify=true": "only a rediss://",
			"redis://:" + secret + "@h:6379?colour=red":       `unknown parameter "colour"`,
			"redis://h:6379?password=" + secret:               "give the password before the host",
			"redis://h:6379?" + secret + "%21=1":              "none of db, protocol, skip_verify",
			"redis://:" + secret:                              "the port is not a number",
			"http://:" + secret + "@h:6379":                   "invalid URL scheme",
		},
		WithPassword: func(pw string) string { return "redis://:" + pw + "@h:6379" },
	})
}
