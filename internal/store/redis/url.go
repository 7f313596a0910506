package redis

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// CheckURL parses a URL as New will, without connecting, so a bad one is
// found before any work. Its errors quote no part of raw.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

// parseURL is rueidis.ParseURL after store.ParseURL's stricter reading and
// a check of the parameters: rueidis ignores the ones it does not know and
// any value of protocol but 2, and storebench sets several of the others
// itself, so a URL that says one of them would silently not be obeyed.
func parseURL(raw string) (rueidis.ClientOption, error) {
	u, err := store.ParseURL(raw)
	if err != nil {
		return rueidis.ClientOption{}, err
	}
	opt, err := rueidis.ParseURL(withoutEmptyPath(u, raw))
	if err != nil {
		return opt, errors.New(store.RedactText(strings.TrimPrefix(err.Error(), "redis: "), raw))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return opt, errors.New("a parameter holds a '%' that starts no escape: write % as %25")
	}
	for name, values := range q {
		if err := checkParam(name, values[len(values)-1], opt.TLSConfig != nil); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// withoutEmptyPath is raw without a path of "/" alone, which redis-cli and
// every Redis client read as database 0 and rueidis refuses (it reads an
// empty database number).
func withoutEmptyPath(u *url.URL, raw string) string {
	if u.Scheme == "unix" || u.Path != "/" {
		return raw
	}
	bare := *u
	bare.Path, bare.RawPath = "", ""
	return bare.String()
}

// setByStorebench are the parameters rueidis reads that storebench
// overrides, with why.
var setByStorebench = map[string]string{
	"dial_timeout":  fmt.Sprintf("storebench bounds connecting and each command itself (%v)", DefaultTimeout),
	"write_timeout": fmt.Sprintf("storebench bounds connecting and each command itself (%v)", DefaultTimeout),
	"client_cache":  "storebench measures without a client-side cache",
	"max_retries":   "storebench counts a failed command, it never retries one",
	"client_name":   "storebench names its connections itself, to find them in CLIENT LIST",
	"addr":          "storebench measures the one server of the URL's host",
	"master_set":    "storebench measures the one server of the URL's host, not through Sentinel",
	"user":          "give the user and password before the host: redis://user:password@host:port",
	"username":      "give the user and password before the host: redis://user:password@host:port",
	"password":      "give the password before the host: redis://:password@host:port",
}

var paramName = regexp.MustCompile(`^[a-z_]{1,32}$`)

// checkParam checks one URL parameter; no message quotes its value, or its
// name unless it looks like one.
func checkParam(name, value string, tls bool) error {
	switch name {
	case "db":
		if n, err := strconv.Atoi(value); err != nil || n < 0 {
			return errors.New("parameter db: want a database number, 0 or more")
		}
	case "protocol":
		if value != "2" && value != "3" {
			return errors.New("parameter protocol: want 2 (RESP2) or 3 (RESP3)")
		}
	case "skip_verify":
		if !tls {
			return errors.New("parameter skip_verify: only a rediss:// (TLS) URL verifies a certificate")
		}
		if _, err := strconv.ParseBool(value); value != "" && err != nil {
			return errors.New("parameter skip_verify: want true or false")
		}
	default:
		why, known := setByStorebench[name]
		switch {
		case known:
			return fmt.Errorf("parameter %s: %s", name, why)
		case paramName.MatchString(name):
			return fmt.Errorf("unknown parameter %q (valid: db, protocol, skip_verify)", name)
		}
		return errors.New("a parameter whose name is none of db, protocol, skip_verify")
	}
	return nil
}
