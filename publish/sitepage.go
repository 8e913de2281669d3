package publish

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/ceiling-bench/ceiling/result"
)

// SitePage is the file name of a run's page on the results site (`ceiling
// report --out`, package site): run-<commit>-<generator>-<finished>.html,
// every part reduced to [A-Za-z0-9._-], so no document can name a path.
// It lives here so that the comment can link a run's page.
func SitePage(r *result.Result) string {
	return "run-" + Slug(shortRef(r.Meta.GitRef)) + "-" + Slug(r.Meta.Generator) + "-" +
		r.Meta.FinishedAt.UTC().Format("20060102T150405Z") + ".html"
}

// Slug keeps [A-Za-z0-9._-] of s (others become '_'), without leading
// dots, at most 60 bytes; "unknown" when nothing is left.
func Slug(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, s)
	s = strings.TrimLeft(s, ".")
	if len(s) > 60 {
		s = s[:60]
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// CheckSiteURL validates the results site's base URL (--site-url): an
// absolute http(s) URL with a host, no credentials, query or fragment, and
// nothing that could end a Markdown link. It returns the URL with one
// trailing slash.
func CheckSiteURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("--site-url: %w", err)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return "", fmt.Errorf("--site-url: %q, want an absolute https:// URL", s)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, " \t\r\n()<>[]\"'`\\"):
		return "", fmt.Errorf("--site-url: %q, want a plain URL (no credentials, query, fragment, spaces or brackets)", s)
	}
	return strings.TrimRight(s, "/") + "/", nil
}
