package store

import (
	"strings"
	"testing"
)

// secret is what every case below hides; the cases that url.Parse rejects
// are the ones an earlier version echoed.
const secret = "S3cr3tXyz987"

// TestSecretsPieces: a message that quotes a piece of a misread password
// (the comma split of --stores echoed `unknown store "Secret"`, issue 28)
// is redacted, in any case, and so are its decoded forms.
func TestSecretsPieces(t *testing.T) {
	s := FindSecrets("--stores", "redis://u:p@ss,"+secret+"@127.0.0.1:6379", "postgres://u:a%2Cb%40"+secret+"@h/db")
	for _, msg := range []string{
		`unknown store "` + secret + `"`,
		`unknown store "` + strings.ToLower(secret) + `"`,
		`bad URL p@ss,` + secret,
		`password a,b@` + secret + ` refused`,
	} {
		if got := s.Redact(msg); strings.Contains(strings.ToLower(got), strings.ToLower(secret)) {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
	// Any bytes, valid UTF-8 or not (a regexp of the forms panicked on
	// "\x8a…", found by FuzzNoSecretLeaks).
	b := FindSecrets("redis://u:\x8a" + secret + "@h:1")
	if got := b.Redact("x \x8a" + strings.ToUpper(secret) + " y"); strings.Contains(strings.ToLower(got), strings.ToLower(secret)) {
		t.Errorf("Redact = %q", got)
	}
	// Pieces shorter than 4 bytes are left: they would mangle the text.
	if got := s.Redact("unknown store ss"); got != "unknown store ss" {
		t.Errorf("a short piece was redacted: %q", got)
	}
}

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://me:" + secret + "@db:5432/app", "postgres://me:xxxxx@db:5432/app"},
		{"redis://:" + secret + "@127.0.0.1:6379", "redis://:xxxxx@127.0.0.1:6379"},
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"},
		// A cluster's seed list is hosts, not a password; its password is one.
		{"redis-cluster://127.0.0.1:7000,127.0.0.1:7001/", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001/"},
		{"redis-cluster://u:" + secret + "@h1:7000,h2:7001,[::1]:7002/", "redis-cluster://u:xxxxx@h1:7000,h2:7001,[::1]:7002/"},
		{"redis-cluster://h1:7000,u:" + secret + "/", "redis-cluster://h1:xxxxx"},
		{"--stores=redis://u:" + secret + "@h:1,memory", "--stores=redis://u:xxxxx@h:1,memory"},
		{"postgres://u:" + secret + "@h:%zz", "postgres://u:xxxxx@h:%zz"},
		{"postgres://h/db?password=" + secret + "&x=1", "postgres://h/db?password=xxxxx&x=1"},
		// Passwords url.Parse rejects or misreads: each reserved character.
		{"postgres://bench:Wr0ng/" + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:Wr0ng#" + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:Wr0ng?" + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:Wr0ng " + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:Wr0ng@" + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:Wr0ng%zz" + secret + "@db:5432/app", "postgres://bench:xxxxx@db:5432/app"},
		{"postgres://bench:12/" + secret + "@db/app", "postgres://bench:xxxxx@db/app"}, // url.Parse accepts it: host bench:12
		{"redis://:Wr0ng/" + secret + "@h:6379/0", "redis://:xxxxx@h:6379/0"},
		{"mysql://bench:Wr0ng#" + secret + "@h:3306/db?tls=true", "mysql://bench:xxxxx@h:3306/db?tls=true"},
		{"mariadb://bench:" + secret + "@h/db", "mariadb://bench:xxxxx@h/db"},
		// The '@' is missing: the port is not one.
		{"postgres://bench:" + secret, "postgres://bench:xxxxx"},
		{"postgres://bench:" + secret + "/db", "postgres://bench:xxxxx"},
		{"redis://[::1]:" + secret, "redis://[::1]:xxxxx"},
		// Several URLs in one string, the first with a reserved character.
		{"redis://u:a/" + secret + "@h:1,postgres://b:" + secret + "@h2/db", "redis://u:xxxxx@h:1,postgres://b:xxxxx@h2/db"},
		// key=value connection strings, as libpq reads them.
		{"host=db password=" + secret + " dbname=app", "host=db password=xxxxx dbname=app"},
		{"host=db password='" + secret + " with spaces' dbname=app", "host=db password=xxxxx dbname=app"},
		{`host=db password='it\'s ` + secret + `' dbname=app`, "host=db password=xxxxx dbname=app"},
		{"host=db password = " + secret + " dbname=app", "host=db password = xxxxx dbname=app"},
		{"host=db password='" + secret, "host=db password=xxxxx"},
		{"host=db password=Wr0ng " + secret + " dbname=app", "host=db password=xxxxx dbname=app"},
		{"--stores=password=" + secret, "--stores=password=xxxxx"},
		{"host=db PASSWORD=" + secret, "host=db PASSWORD=xxxxx"},
		// Password parameters in a URL, cut short by a raw '&' or '#'.
		{"postgres://h/db?sslmode=disable&password=" + secret + "&x=1", "postgres://h/db?sslmode=disable&password=xxxxx&x=1"},
		{"postgres://h/db?password=Wr0ng&" + secret + "&x=1", "postgres://h/db?password=xxxxx&x=1"},
		{"postgres://h/db?password=Wr0ng#" + secret, "postgres://h/db?password=xxxxx"},
		{"postgres://h/db?sslpassword=" + secret, "postgres://h/db?sslpassword=xxxxx"},
		{"postgres://h/db?pass%77ord=" + secret, "postgres://h/db?pass%77ord=xxxxx"},
		// User information without a ':' (issue 28): Redis sends it as the
		// password, so every URL's is hidden whole.
		{"redis://" + secret + "@h:6379", "redis://xxxxx@h:6379"},
		{"redis://" + secret + ":@h:6379", "redis://xxxxx@h:6379"},
		{"rediss://" + secret + "@h:6379/?skip_verify=true", "rediss://xxxxx@h:6379/?skip_verify=true"},
		{"postgres://bench@h/db?application_name=a@b", "postgres://xxxxx@h/db?application_name=a@b"},
		{"target redis@redis://" + secret + "@h:1: refused", "target redis@redis://xxxxx@h:1: refused"},
		{`target "redis://a/b?c#` + secret + ` d%zz@127.0.0.1:6379" is unknown`, `target "redis://xxxxx@127.0.0.1:6379" is unknown`},
		// Nothing to hide.
		{"sqlite:///tmp/a@b.db", "sqlite:///tmp/a@b.db"},
		{"file:///tmp/x:y@z", "file:///tmp/x:y@z"},
		{"redis://[::1]:6379/0", "redis://[::1]:6379/0"},
		{"connect redis://h:6379: connection refused", "connect redis://h:6379: connection refused"},
		{"allowCleartextPasswords=true", "allowCleartextPasswords=true"},
	} {
		got := RedactURL(c.in)
		if got != c.want || strings.Contains(got, secret) {
			t.Errorf("RedactURL(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRedactText(t *testing.T) {
	raw := "postgres://bench:Wr0ng%2F" + secret + "@db/app"
	// A driver quoting the decoded password, or the URL in full.
	for _, msg := range []string{
		"auth failed for password Wr0ng/" + secret,
		"cannot parse " + raw + ": bad",
	} {
		if got := RedactText(msg, raw); strings.Contains(got, secret) {
			t.Errorf("RedactText(%q) = %q", msg, got)
		}
	}
	if got := RedactText("auth failed: it's "+secret, "host=db password='it\\'s "+secret+"'"); strings.Contains(got, secret) {
		t.Errorf("quoted key=value password kept: %q", got)
	}
}

func TestParseURL(t *testing.T) {
	for _, raw := range []string{
		"postgres://bench:Wr0ng/" + secret + "@db:5432/app",
		"postgres://bench:Wr0ng#" + secret + "@db:5432/app",
		"postgres://bench:Wr0ng?" + secret + "@db:5432/app",
		"postgres://bench:Wr0ng " + secret + "@db:5432/app",
		"postgres://bench:Wr0ng@" + secret + "@db:5432/app",
		"postgres://bench:Wr0ng%zz" + secret + "@db:5432/app",
		"postgres://bench:12/" + secret + "@db/app",
		"redis://:Wr0ng/" + secret + "@h:6379",
		"mysql://bench:Wr0ng#" + secret + "@h:3306/db",
		"postgres://h/db?password=Wr0ng#" + secret,
		"postgres://h/db?password=Wr0ng " + secret,
		"postgres://h/db?password=Wr0ng%zz" + secret,
	} {
		_, err := ParseURL(raw)
		if err == nil || !strings.Contains(err.Error(), "percent-encode") {
			t.Errorf("ParseURL(%q) = %v, want a percent-encode hint", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("ParseURL(%q) error quotes the password: %v", raw, err)
		}
		if h := URLHost(raw); strings.Contains(h, secret) {
			t.Errorf("URLHost(%q) = %q", raw, h)
		}
		if s := SafeURL(raw); strings.Contains(s, secret) || strings.Contains(s, "Wr0ng") {
			t.Errorf("SafeURL(%q) = %q", raw, s)
		}
	}
	for raw, reason := range map[string]string{
		"postgres://bench:" + secret:         "the port is not a number",
		"postgres://bench:" + secret + "/db": "the port is not a number",
		"redis://h:6379:x:y/%zz":             "the port is not a number",
		"redis://h:6379/%zz":                 "a '%' that starts no escape",
		"redis://h:6379/\x7f":                "control character",
	} {
		_, err := ParseURL(raw)
		if err == nil || !strings.Contains(err.Error(), reason) || strings.Contains(err.Error(), secret) {
			t.Errorf("ParseURL(%q) = %v, want %q", raw, err, reason)
		}
	}
	for raw, host := range map[string]string{
		"postgres://bench:Wr0ng%2F" + secret + "@db:5432/app": "db:5432",
		"postgres://bench@h/db?application_name=a@b":          "h",
		"redis://[::1]:6379/0":                                "[::1]:6379",
		"mysql://u:p@h:3306/db?tls=true":                      "h:3306",
	} {
		u, err := ParseURL(raw)
		if err != nil || u.Host != host || URLHost(raw) != host {
			t.Errorf("ParseURL(%q) = %v, %v; URLHost %q; want host %s", raw, u, err, URLHost(raw), host)
		}
	}
}

func TestSafeURL(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://bench:Wr0ng/" + secret + "@db:5432/app": "postgres://db:5432/…",
		"redis://:" + secret + "@127.0.0.1:6379":            "redis://127.0.0.1:6379",
		"postgres://bench:" + secret:                        "postgres://…",
		"host=db password=" + secret:                        "the URL",
		"memcached-pool://h1:1,h2:2/":                       "memcached-pool://h1:1,h2:2/…",
		"redis-cluster://u:" + secret + "@h1:1,h2:2":        "redis-cluster://h1:1,h2:2",
	} {
		if got := SafeURL(raw); got != want {
			t.Errorf("SafeURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
