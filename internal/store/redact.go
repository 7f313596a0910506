package store

import (
	"net/url"
	"regexp"
)

var (
	// passwordInText catches user:password@ in strings that url.Parse rejects.
	passwordInText = regexp.MustCompile(`(://[^:/@\s]*):[^@/\s]*@`)
	// passwordParam catches password=... in a query string (libpq's form).
	passwordParam = regexp.MustCompile(`((?:^|[?&\s])password=)[^&\s]*`)
)

// RedactURL replaces the password of a URL (or of any text holding one) with
// "xxxxx", so it never reaches the terminal, a log or a result file.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			s = u.String()
		}
	}
	s = passwordInText.ReplaceAllString(s, "${1}:xxxxx@")
	return passwordParam.ReplaceAllString(s, "${1}xxxxx")
}
