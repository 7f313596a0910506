package store

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Redacted stands for a password in everything storebench prints or records.
const Redacted = "xxxxx"

// RedactURL returns s with every password in it replaced by Redacted,
// whatever the shape of s: a URL that url.Parse accepts or rejects (a
// password holding '/', '#', '?', '@', a space or a stray '%'), several URLs
// (a --stores list), a key=value connection string (password=secret,
// password='quoted value'), or password= query parameters. Where a URL's user
// information cannot be told from its host or path, it hides too much rather
// than too little: everything from the first ':' after "//" to the last '@'.
func RedactURL(s string) string {
	spans := secretSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Redacted)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactText removes from msg (a driver's message, say) every password of
// raw, the URL or connection string that msg may quote in full or in part,
// then redacts what is left as RedactURL does.
func RedactText(msg, raw string) string {
	return RedactURL(FindSecrets(raw).Redact(msg))
}

// Secrets are the passwords in what a user gave storebench (its arguments,
// a scenario's targets), in every form a message could quote them: as
// written, unquoted, percent-decoded, and each piece of them between
// characters a parser splits at (a --stores list's comma, a URL's '@' or
// ':'), since a message that quotes a piece of a misread URL quotes a piece
// of its password.
type Secrets struct {
	forms []string // ASCII-lower-cased, longest first
}

// FindSecrets finds the passwords in texts.
func FindSecrets(texts ...string) Secrets {
	var s Secrets
	s.Add(texts...)
	return s
}

// Add finds the passwords in texts and adds them to s.
func (s *Secrets) Add(texts ...string) {
	n := len(s.forms)
	for _, raw := range texts {
		for _, sp := range secretSpans(raw) {
			v := raw[sp.start:sp.end]
			for _, form := range []string{v, unquote(v), unescape(v), queryUnescape(v)} {
				s.forms = append(s.forms, form)
				if !sp.guess {
					s.forms = append(s.forms, strings.FieldsFunc(form, isSeparator)...)
				}
			}
		}
	}
	if len(s.forms) == n {
		return
	}
	// Shorter ones would mangle the text (a password "ab" in "table");
	// messages never quote a password on purpose, this is the safety net.
	s.forms = slices.DeleteFunc(s.forms, func(f string) bool { return len(f) < 4 || f == Redacted })
	for i, f := range s.forms {
		s.forms[i] = asciiLower(f)
	}
	slices.SortFunc(s.forms, func(a, b string) int { return len(b) - len(a) })
	s.forms = slices.Compact(s.forms)
}

// Redact replaces every form of every password of s in text. Unlike
// RedactURL, it finds nothing else: the passwords were found in the input
// itself, where a URL is a URL, and a message's own text (an '@' or a ':'
// after a quoted "scheme://") is left whole.
func (s Secrets) Redact(text string) string {
	if len(s.forms) == 0 {
		return text
	}
	// Bytes, not a regexp: input may be any bytes, valid UTF-8 or not.
	lower := asciiLower(text)
	hidden := make([]bool, len(text))
	for _, f := range s.forms {
		for off := 0; ; {
			i := strings.Index(lower[off:], f)
			if i < 0 {
				break
			}
			for k := off + i; k < off+i+len(f); k++ {
				hidden[k] = true
			}
			off += i + 1
		}
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if !hidden[i] {
			b.WriteByte(text[i])
			continue
		}
		b.WriteString(Redacted)
		for i+1 < len(text) && hidden[i+1] {
			i++
		}
	}
	return b.String()
}

// asciiLower folds ASCII letters only, so that byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isSeparator says c is where a parser may cut a password in pieces.
func isSeparator(c rune) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80)
}

// EndsInPassword says whether s ends inside a password (a password=
// parameter, empty or not, runs to its end): what follows s in a list may be
// the rest of it.
func EndsInPassword(s string) bool {
	for _, sp := range paramSpans(s) {
		if sp.end == len(s) {
			return true
		}
	}
	return strings.HasSuffix(strings.ToLower(s), "password=")
}

// QuoteName quotes a name the user gave (a target a workload names, a
// cache) for a message, unless it holds a URL: a password may sit in it in
// a shape that no redaction finds, so it is described, not quoted.
func QuoteName(name string) string {
	if strings.Contains(name, "://") {
		return "given by its URL (name a target by its label or name, never its URL)"
	}
	return strconv.Quote(name)
}

// span is the byte range of a secret in a string. A guess is text that
// may hold a password (no '@' ends it): hidden whole, never cut in pieces.
type span struct {
	start, end int
	guess      bool
}

// secretSpans finds every password in s, sorted and merged.
func secretSpans(s string) []span {
	spans := append(userinfoSpans(s), paramSpans(s)...)
	if len(spans) < 2 {
		return spans
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		if top := &merged[len(merged)-1]; sp.start <= top.end {
			top.end = max(top.end, sp.end)
			top.guess = top.guess || sp.guess
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// userinfoSpans finds the password of every URL in s ("scheme://user:pw@host").
func userinfoSpans(s string) []span {
	var spans []span
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			return spans
		}
		start := off + i + 3
		end := start + nextURL(s[start:])
		if sp, ok := authoritySecret(s[start:end]); ok {
			spans = append(spans, span{start: start + sp.start, end: start + sp.end, guess: sp.guess})
		}
		off = end
	}
}

// nextURL is where the next URL of a list starts in s ("…,redis://…"): at a
// scheme that follows a separator. A "://" inside a password, not preceded
// by one, stays part of the URL.
func nextURL(s string) int {
	for off := 0; ; {
		j := strings.Index(s[off:], "://")
		if j < 0 {
			return len(s)
		}
		j += off
		k := j
		for k > 0 && isSchemeByte(s[k-1]) {
			k--
		}
		if k < j && (k == 0 || strings.IndexByte(",; \t\n\"'`(<=", s[k-1]) >= 0) {
			return k
		}
		off = j + 3
	}
}

// authoritySecret finds the password in tok, the text of one URL after "//".
func authoritySecret(tok string) (span, bool) {
	at := userinfoEnd(tok)
	if c := strings.IndexByte(tok[:max(at, 0)], ':'); c >= 0 && c+1 < at {
		return span{start: c + 1, end: at}, true
	}
	// User information without a ':' ("redis://secret@host"), or with an
	// empty password ("redis://secret:@host"), may be a password: Redis has
	// no login by user alone, and its drivers send it as the password. Hide
	// all of it.
	if at > 0 {
		return span{start: 0, end: at}, true
	}
	// "host:port" whose port is not a number: most likely "user:password"
	// whose '@' is missing or follows a '/', '?' or '#'; hide all of it.
	hostStart := at + 1
	hostEnd := hostStart + indexAnyOrLen(tok[hostStart:], "/?# \t\n")
	host := tok[hostStart:hostEnd]
	if hostList(host) {
		return span{}, false
	}
	portAt := strings.IndexByte(host, ':')
	if strings.HasPrefix(host, "[") { // an IPv6 literal: the port follows ']'
		portAt = -1
		if end := strings.IndexByte(host, ']'); end >= 0 && end+1 < len(host) {
			portAt = end + 1
		}
	}
	if portAt < 0 {
		return span{}, false
	}
	port := strings.TrimSuffix(host[portAt:], ":") // "host:6379: refused" in a message
	if port == "" || port[0] == ':' && allDigits(port[1:]) {
		return span{}, false
	}
	if host[portAt] == ':' {
		portAt++
	}
	return span{start: hostStart + portAt, end: len(tok), guess: true}, true
}

// hostList says s is a list of two or more host:port (a cluster's seed
// nodes, "h1:7000,h2:7001"), every port a number: no password in it.
func hostList(s string) bool {
	hosts := strings.Split(s, ",")
	if len(hosts) < 2 {
		return false
	}
	for _, h := range hosts {
		if !hostPort.MatchString(h) || !strings.Contains(h[max(strings.LastIndexByte(h, ']'), 0):], ":") {
			return false
		}
	}
	return true
}

// userinfoEnd is the index of the '@' that ends the user information in
// rest, the text of a URL after "//", or -1. It is the last '@' when what
// precedes its first ':' can be a user name: url.Parse would take the first
// '/', '?' or '#' of a password for the end of the host, and fail or, worse,
// read the rest as the path. Otherwise the '@' is in the path or a
// parameter, and url.Parse's reading stands.
func userinfoEnd(rest string) int {
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return -1
	}
	if user, _, _ := strings.Cut(rest[:at], ":"); strings.ContainsAny(user, "/?#@ \t\n") && !hostWithPort(rest[at+1:]) {
		return strings.LastIndex(rest[:indexAnyOrLen(rest, "/?#")], "@")
	}
	return at
}

// hostWithPort says whether s (what follows an '@') opens with a host and
// a numeric port ("127.0.0.1:6379/0"): then the '@' ends user information,
// however odd what precedes it ("redis://a/b?c@h:6379", a password with
// '/' and '?' that its user did not percent-encode).
func hostWithPort(s string) bool {
	h := s[:indexAnyOrLen(s, "/?# \t\n\"'`,;)>")]
	return hostPort.MatchString(h) && strings.Contains(h[max(strings.LastIndexByte(h, ']'), 0):], ":")
}

// paramSpans finds the values of password parameters: "?password=…" and
// "&sslpassword=…" in URLs, "password=…" and "password = '…'" in key=value
// connection strings.
func paramSpans(s string) []span {
	var spans []span
	for i := 0; i < len(s); {
		if !isKeyByte(s[i]) || (i > 0 && isKeyByte(s[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(s) && isKeyByte(s[j]) {
			j++
		}
		k := skipBlanks(s, j)
		if k == len(s) || s[k] != '=' || !secretKey(s[i:j]) {
			i = j
			continue
		}
		var sp span
		if i > 0 && (s[i-1] == '?' || s[i-1] == '&') {
			sp = queryValue(s, k+1)
		} else {
			sp = keywordValue(s, skipBlanks(s, k+1))
		}
		if sp.end > sp.start {
			spans = append(spans, sp)
		}
		i = max(sp.end, k+1)
	}
	return spans
}

// secretKey reports whether a parameter name names a password, however it
// is written (pgx decodes the names of URL parameters).
func secretKey(k string) bool {
	if d, err := url.QueryUnescape(k); err == nil {
		k = d
	}
	k = strings.ToLower(strings.TrimSpace(k))
	return k == "password" || k == "sslpassword"
}

// queryValue is a URL parameter's value from v: up to the next '&', and over
// any following "&…" without '=', which can only be the rest of a password
// holding a raw '&'.
func queryValue(s string, v int) span {
	end := v + indexAnyOrLen(s[v:], "&")
	for end < len(s) {
		next := end + 1 + indexAnyOrLen(s[end+1:], "&")
		if strings.Contains(s[end+1:next], "=") {
			break
		}
		end = next
	}
	return span{start: v, end: end}
}

// keywordValue is a key=value value from v: a single-quoted one with
// backslash escapes, as libpq reads it, or one up to a blank, and over any
// following words without '=', which can only be the rest of a password
// holding a raw space.
func keywordValue(s string, v int) span {
	if v < len(s) && s[v] == '\'' {
		for i := v + 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return span{start: v, end: i + 1}
			}
		}
		return span{start: v, end: len(s)}
	}
	end := v + indexAnyOrLen(s[v:], " \t\n")
	for end < len(s) {
		w := skipBlanks(s, end)
		we := w + indexAnyOrLen(s[w:], " \t\n")
		if w == len(s) || strings.Contains(s[w:we], "=") {
			break
		}
		end = we
	}
	return span{start: v, end: end}
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		v = v[1 : len(v)-1]
	}
	return strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v)
}

func queryUnescape(v string) string {
	if d, err := url.QueryUnescape(v); err == nil {
		return d
	}
	return v
}

func unescape(v string) string {
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}

func indexAnyOrLen(s, chars string) int {
	if i := strings.IndexAny(s, chars); i >= 0 {
		return i
	}
	return len(s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '%'
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
