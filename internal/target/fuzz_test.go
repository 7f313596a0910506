package target

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storebench/storebench/internal/server"
)

// FuzzParseTarget plants a password in every position a target string can
// hold one (URL user information raw and percent-encoded, a password
// parameter raw and encoded, key=value strings plain and quoted) for every
// server scheme, and checks that no error and no way of printing the parsed
// spec shows it, and that nothing panics.
func FuzzParseTarget(f *testing.F) {
	for _, pw := range []string{
		secret, "Wr0ng/" + secret, "Wr0ng#" + secret, "Wr0ng " + secret, "Wr0ng?" + secret,
		"Wr0ng@" + secret, "Wr0ng%zz" + secret, "12/" + secret, "Wr0ng&" + secret, "it's " + secret,
		`back\slash'` + secret, "Wr0ng:" + secret, "x,redis://" + secret, "password=" + secret,
		"Wr0ng\n" + secret, "Wr0ng\t" + secret, "Wr0ngé" + secret, "%2F%40" + secret, "[::1]:" + secret,
	} {
		f.Add(pw)
	}
	r := replicaRegistry()
	f.Fuzz(func(t *testing.T, pw string) {
		if len(pw) < 6 || !utf8.ValidString(pw) {
			return // the brief's floor; a YAML file or a shell gives valid UTF-8
		}
		twin := rotate(pw)
		for _, form := range plantings {
			in := form(pw)
			outs := parseOutputs(r, in)
			if !strings.Contains(strings.Join(outs, "\n"), pw) {
				continue
			}
			// Text the output holds whatever the password (the host, a
			// message) may happen to contain pw: the same input with a
			// different password of the same character classes tells.
			if twin != pw && strings.Contains(strings.Join(parseOutputs(r, form(twin)), "\n"), pw) {
				continue
			}
			for _, out := range outs {
				if strings.Contains(out, pw) {
					t.Errorf("Parse(%q) shows the password in %q", in, out)
				}
			}
		}
	})
}

// plantings put a password where target strings hold one.
var plantings = func() []func(string) string {
	var p []func(string) string
	for _, scheme := range []string{"postgres", "postgresql", "redis", "rediss", "mysql", "mariadb"} {
		base := scheme + "://"
		p = append(p,
			func(pw string) string { return base + "bench:" + pw + "@db.example:5432/app" },
			func(pw string) string { return base + ":" + pw + "@db.example:5432" },
			func(pw string) string {
				return base + "bench:" + pw + "@db.example:5432/app?sslmode=bogus&tls=bogus&protocol=9"
			},
			func(pw string) string { return base + url.UserPassword("bench", pw).String() + "@db.example:5432/app" },
			func(pw string) string { return base + "db.example:5432/app?password=" + pw },
			func(pw string) string {
				return base + "db.example:5432/app?sslmode=disable&password=" + url.QueryEscape(pw)
			},
		)
	}
	// A cluster's seed list after the password.
	p = append(p,
		func(pw string) string { return "redis-cluster://bench:" + pw + "@h1.example:7000,h2.example:7001/" },
		func(pw string) string {
			return "redis-cluster://:" + pw + "@h1.example:7000,h2.example:7001/?protocol=9"
		},
		func(pw string) string { return "redis-cluster://h1.example:7000,h2.example:7001/?password=" + pw },
		func(pw string) string {
			return "redis-cluster://" + url.UserPassword("bench", pw).String() + "@h1.example:7000/app"
		},
	)
	// A replica set's nodes after the password, and its options' values.
	p = append(p,
		func(pw string) string {
			return "postgres-replicas://bench:" + pw + "@h1.example:5432,h2.example:5433/app"
		},
		func(pw string) string {
			return "postgres-replicas://bench:" + pw + "@h1.example:5432,h2.example:x/app?sslmode=bogus"
		},
		func(pw string) string {
			return "postgres-replicas://h1.example:5432,h2.example:5433/app?password=" + pw
		},
		func(pw string) string { return "postgres-replicas://bench:" + pw + "@h1.example:5432/app" },
		func(pw string) string { return "postgres-replicas:reads=" + pw },
		func(pw string) string { return "postgres-replicas:replicas=" + notNumber(pw) + ",reads=any" },
		func(pw string) string { return "postgres:replicas=" + notNumber(pw) },
	)
	// A version's "@" where a URL's user information would be. Digits and
	// dots there are a version, which a label shows, not a password.
	atVersion := func(pw, rest string) string {
		if server.CheckVersion(pw) == nil {
			return ""
		}
		return pw + rest
	}
	p = append(p,
		func(pw string) string { return "postgres@" + atVersion(pw, "") },
		func(pw string) string { return "valkey@" + atVersion(pw, ":none") },
		func(pw string) string { return "pg@bench:" + pw + "@db.example:5432/app" },
		func(pw string) string { return "redis@7.0@" + pw },
	)
	return append(p,
		func(pw string) string { return "host=db.example password=" + pw + " dbname=app" },
		func(pw string) string {
			return "host=db.example password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "' dbname=app"
		},
		func(pw string) string { return "password=" + pw },
	)
}()

// notNumber is pw, or "" when it is a whole number: a count a label shows
// (replicas=00000000001 is one replica), not a password.
func notNumber(pw string) string {
	if _, err := strconv.Atoi(pw); err == nil {
		return ""
	}
	return pw
}

// parseOutputs is everything Parse and Check can show of in.
func parseOutputs(r Registry, in string) []string {
	spec, err := r.Parse(in)
	if err != nil {
		return []string{err.Error()}
	}
	outs := printed(spec)
	if err := r.Check(spec); err != nil {
		outs = append(outs, err.Error())
	}
	return outs
}

// rotate changes every ASCII letter and digit of s to another of its class
// (hex letters stay hex letters), so a URL parses the same way.
func rotate(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'f':
			b[i] = 'a' + (c-'a'+1)%6
		case c >= 'A' && c <= 'F':
			b[i] = 'A' + (c-'A'+1)%6
		case c >= 'g' && c <= 'z':
			b[i] = 'g' + (c-'g'+1)%20
		case c >= 'G' && c <= 'Z':
			b[i] = 'G' + (c-'G'+1)%20
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		}
	}
	return string(b)
}

// FuzzParseVersion: store@version[:profile] targets, the brief's cases
// among the seeds. Nothing panics; an error is one line; a target that
// parses prints as a label that parses back to the same target.
func FuzzParseVersion(f *testing.F) {
	for _, in := range []string{
		"postgres@", "postgres@abc", "postgres@99", "memory@1", "postgres@18", "postgres@15", "redis@7.0",
		"valkey@9.1", "valkey", "valkey@9.1:aof-always", "pg@18:async-commit", "postgres@18.6.1.2",
		"redis@7.0@x", "postgres:async-commit@18", "mysql@10.11:relaxed", "redis:default", "@18", "postgres@@",
		"redis-cluster:replicas=1", "redis-cluster@7.0:none,nodes=2", "redis-cluster:nodes=,replicas=", "redis-cluster:=1",
		"redis-cluster:replicas=1,replicas=2", "redis-cluster:nodes=99999999999999999999",
	} {
		f.Add(in)
	}
	r := testRegistry()
	f.Fuzz(func(t *testing.T, in string) {
		spec, err := r.Parse(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%q) error is not one line: %q", in, err)
			}
			return
		}
		if spec.URL != "" {
			return // a URL's label is redacted: it does not parse back
		}
		if spec.Version != "" && server.CheckVersion(spec.Version) != nil {
			t.Errorf("Parse(%q) accepted version %q", in, spec.Version)
		}
		back, err := r.Parse(spec.Label())
		profile := func(s Spec) string { return strings.TrimPrefix(s.Profile, "default") }
		if err != nil || back.Store != spec.Store || back.Version != spec.Version || profile(back) != profile(spec) {
			t.Errorf("Parse(%q) = %+v, whose label %q parses to %+v, %v", in, spec, spec.Label(), back, err)
		}
	})
}
