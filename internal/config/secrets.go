package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Secrets returns what shepherd's log must never show: every replica's
// DSN that holds a password, whole, then the passwords of the DSNs and
// of the users, longest first (a password inside another is replaced
// with it). The log replaces each with a mark.
func (c *Config) Secrets() []string {
	var dsns, pws []string
	for _, r := range c.Replicas {
		if pw := DSNPassword(r.DSN); pw != "" {
			dsns = append(dsns, r.DSN)
			// A URL's password may appear escaped too.
			pws = append(pws, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	for _, u := range c.Users {
		if u.Password != "" {
			pws = append(pws, u.Password)
		}
	}
	byLength := func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(dsns, byLength)
	slices.SortFunc(pws, byLength)
	return slices.Compact(append(dsns, pws...))
}

// keywordPassword finds password=... in a keyword/value DSN (libpq's
// form), quoted or not.
var keywordPassword = regexp.MustCompile(`(?i)(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// queryPassword finds password=... among a URL's query parameters
// (postgres://h/db?user=u&password=p, which libpq accepts too).
var queryPassword = regexp.MustCompile(`(?i)[?&]password=([^&#]*)`)

// DSNPassword returns the password a DSN holds, "" if none: a URL's
// (postgres://u:p@h/db or postgres://h/db?password=p), a keyword/value
// DSN's (password=p) or a go-sql-driver/mysql DSN's (u:p@tcp(h)/db).
func DSNPassword(dsn string) string {
	if strings.Contains(dsn, "://") {
		if u, err := url.Parse(dsn); err == nil {
			if pw, ok := u.User.Password(); ok {
				return pw
			}
		} else if pw := u2Password(dsn); pw != "" {
			return pw
		}
		// The query is read raw: url.Values drops a pair it cannot
		// unescape, and its password must still be found.
		if m := queryPassword.FindStringSubmatch(dsn); m != nil {
			if pw, err := url.QueryUnescape(m[1]); err == nil {
				return pw
			}
			return m[1]
		}
		return ""
	}
	if m := keywordPassword.FindStringSubmatch(dsn); m != nil {
		pw := m[1]
		if strings.HasPrefix(pw, "'") && strings.HasSuffix(pw, "'") && len(pw) >= 2 {
			pw = strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(pw[1 : len(pw)-1])
		}
		return pw
	}
	// go-sql-driver/mysql: [user[:password]@][net[(addr)]]/dbname[?params]
	prefix := dsn
	if slash := strings.LastIndex(dsn, "/"); slash >= 0 {
		prefix = dsn[:slash]
	}
	if at := strings.LastIndex(prefix, "@"); at > 0 {
		if _, pw, ok := strings.Cut(prefix[:at], ":"); ok {
			return pw
		}
	}
	return ""
}

// u2Password reads the password of a URL that net/url refuses (an
// unescaped character in it): what lies between the first ':' after the
// scheme and the last '@' before the host.
func u2Password(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
		return pw
	}
	return ""
}
