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
			"redis://:" + secret + "@h:6379/",
			"rediss://h:6380/?skip_verify=true",
			"unix:///tmp/redis.sock",
		},
		Bad: map[string]string{
			"redis://:" + secret + "@h:6379?protocol=9":       "protocol: want 2 (RESP2) or 3 (RESP3)",
			"redis://:" + secret + "@h:6379?db=-1":            "db: want a database number",
			"redis://:" + secret + "@h:6379/x":                "invalid database number",
			"redis://:" + secret + "@h:6379/1/2":              "invalid URL path",
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

// TestParseURLEmptyPath: an empty path after the host ("/") is database 0,
// as redis-cli and every Redis client read it, and the rest of the URL is
// still obeyed (rueidis alone refused it: invalid database number "").
func TestParseURLEmptyPath(t *testing.T) {
	for raw, want := range map[string]struct {
		db         int
		skipVerify bool
		password   string
	}{
		"redis://:" + storetest.Secret + "@h:6379/": {db: 0, password: storetest.Secret},
		"redis://h:6379/?db=3":                      {db: 3},
		"redis://h:6379/4":                          {db: 4},
		"rediss://h:6380/?skip_verify=true":         {db: 0, skipVerify: true},
	} {
		opt, err := parseURL(raw)
		if err != nil {
			t.Errorf("parseURL(%q): %v", raw, err)
			continue
		}
		if opt.SelectDB != want.db {
			t.Errorf("parseURL(%q): database %d, want %d", raw, opt.SelectDB, want.db)
		}
		if got := opt.TLSConfig != nil && opt.TLSConfig.InsecureSkipVerify; got != want.skipVerify {
			t.Errorf("parseURL(%q): skip_verify %v, want %v", raw, got, want.skipVerify)
		}
		if opt.Password != want.password {
			t.Errorf("parseURL(%q): the password read back differs", raw)
		}
	}
}
