package store

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// escapeHint says how to write the characters a URL reserves; it names none
// of the password's own characters.
const escapeHint = "percent-encode it: / as %2F, ? as %3F, # as %23, @ as %40, % as %25, a space as %20"

// ParseURL parses a URL (postgres://, redis://, mysql://, sqlite://…)
// more strictly than url.Parse, with errors that never quote it. url.Parse
// reads a password holding '/', '?' or '#' as part of the host or the path
// (and then succeeds, or fails quoting the password as a port), so a user
// name or password holding a character a URL reserves is refused first,
// saying how to write it; so is a password parameter that url.ParseQuery
// would cut short.
func ParseURL(raw string) (*url.URL, error) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, errors.New("not a URL: no scheme://")
	}
	if at := userinfoEnd(rest); at >= 0 {
		user, password, hasPassword := strings.Cut(rest[:at], ":")
		if !validUserinfo(user) {
			return nil, errors.New("the user name holds a character a URL reserves: " + escapeHint)
		}
		if hasPassword && !validUserinfo(password) {
			return nil, errors.New("the password holds a character a URL reserves: " + escapeHint)
		}
		rest = rest[at+1:]
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		for _, kv := range strings.Split(rest[q+1:], "&") {
			k, v, _ := strings.Cut(kv, "=")
			if secretKey(k) && !validQueryValue(v) {
				return nil, errors.New("the password parameter holds a character a URL reserves: " + escapeHint)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New(urlReason(err))
	}
	return u, nil
}

// urlReason says why url.Parse failed without quoting the URL (url.Error
// does) or the port it could not read (which, when the '@' is missing, is
// the password).
func urlReason(err error) string {
	msg := err.Error()
	if ue, ok := errors.AsType[*url.Error](err); ok {
		msg = ue.Err.Error()
	}
	switch {
	case strings.HasPrefix(msg, "invalid port"):
		return "the port is not a number (a password goes before the host: scheme://user:password@host:port)"
	case strings.HasPrefix(msg, "invalid URL escape"):
		return "a '%' that starts no escape: write % as %25"
	case strings.Contains(msg, "invalid control character"):
		return "a control character in the URL"
	case strings.Contains(msg, `"`):
		return "not a valid URL"
	}
	return msg
}

// validUserinfo accepts what url.Parse accepts in user information (RFC
// 3986 unreserved and sub-delims characters, ':' and escapes), without '@':
// it is never part of the user name or the password unencoded.
func validUserinfo(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._:~!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// validQueryValue refuses what url.ParseQuery would cut or reject in a
// parameter's value: a '#' (the start of the fragment), a blank, a control
// character, a '%' that starts no escape.
func validQueryValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c <= ' ' || c == 0x7f || c == '#':
			return false
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hostPort is a host name or IPv4 address, or an IPv6 literal, with an
// optional numeric port: what URLHost may print.
var hostPort = regexp.MustCompile(`^([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// URLHost returns the host:port of a URL (or its list of them, a
// cluster's seeds) for a message when it can be told
// for sure, and "" otherwise: a message about a malformed URL can name the
// server without quoting anything that might be part of a password.
func URLHost(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	rest = rest[userinfoEnd(rest)+1:]
	host := rest[:indexAnyOrLen(rest, "/?#")]
	if !hostPort.MatchString(host) && !hostList(host) {
		return ""
	}
	return host
}

// schemeRE is what SafeURL may print as a scheme.
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]{0,19}$`)

// SafeURL names a URL in a message by its scheme and host alone,
// "postgres://db:5432/…", each only when it can be told for sure: nothing
// else of it, which may hold a password, however malformed it is.
func SafeURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !schemeRE.MatchString(scheme) {
		return "the URL"
	}
	host := URLHost(raw)
	if host == "" {
		return scheme + "://…"
	}
	if rest = rest[userinfoEnd(rest)+1:]; len(rest) > len(host) {
		host += "/…"
	}
	return scheme + "://" + host
}

// CheckPathURL accepts a file:// or sqlite:// URL that is a local path and
// nothing else: the stores read only the path, so a parameter such as
// ?journal_mode=OFF would be ignored while the run claimed it; example is
// an option to suggest instead, e.g. "synchronous: FULL".
func CheckPathURL(raw, example string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s URL: not a URL", strings.SplitN(raw, ":", 2)[0])
	case u.Host != "" && u.Host != "localhost":
		// The host is not quoted: in a local URL it is as likely a misplaced
		// password ("file://pw@/dir" with a '#' or '/' in pw) as a host.
		return fmt.Errorf("%s URL: a host where none belongs: the path must be local (write %s:///path)", u.Scheme, u.Scheme)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%s URL %s: parameters are not read from the URL; give them as the target's options (in a scenario: options: {%s})", u.Scheme, u.Path, example)
	case u.Path == "":
		return fmt.Errorf("%s URL: no path", u.Scheme)
	}
	return nil
}

// URLPath is the path of a file:// or sqlite:// URL (checked by CheckPathURL).
func URLPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// CheckServerURL is a server store's Config check of its URL, without
// connecting: it is given, and parse reads it. parse's errors must quote no
// part of the URL; the message names it by scheme and host alone (SafeURL).
func CheckServerURL(name, raw string, parse func(string) error) error {
	if raw == "" {
		return errors.New(name + ": no URL")
	}
	if err := parse(raw); err != nil {
		return fmt.Errorf("%s: bad URL %s: %w", name, SafeURL(raw), err)
	}
	return nil
}

// CheckServerConfig is a server store's Config.Validate, in the order they
// all check: its URL (CheckServerURL), then its own options (optionsErr is
// their check's verdict, nil when they are fine), then its namespace.
func CheckServerConfig(name, rawURL string, parse func(string) error, optionsErr error, namespace string) error {
	if err := CheckServerURL(name, rawURL, parse); err != nil {
		return err
	}
	if optionsErr != nil {
		return optionsErr
	}
	return ValidNamespace(namespace)
}

// CheckTimeout refuses a negative timeout of a server store's Config (0
// means the store's default).
func CheckTimeout(name string, d time.Duration) error {
	if d < 0 {
		return errors.New(name + ": negative timeout")
	}
	return nil
}

// ParseSchemeURL is ParseURL for a store that has a scheme of its own
// (compared in any case), such as a cluster's or a pool's.
func ParseSchemeURL(raw, scheme string) (*url.URL, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return nil, fmt.Errorf("want a %s:// URL", scheme)
	}
	return u, nil
}

// CheckHostPorts checks the servers a URL lists (host:port,host:port…):
// each a host and a port from 1 to 65535. noun names one in the error
// ("node 2 of 3"), which quotes none of them: a misplaced password would
// land in the list.
func CheckHostPorts(hosts []string, noun string) error {
	for i, h := range hosts {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s %d of %d: want host:port, the port a number from 1 to 65535", noun, i+1, len(hosts))
		}
	}
	return nil
}
