package target

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
)

// checkMetrics checks the target's "metrics" and "profile"; errors name
// the field.
func (t Spec) checkMetrics() []error {
	var errs []error
	if m := t.Metrics; m != nil {
		if err := checkHTTPURL(Expand(m.URL, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("metrics.url: %w", err))
		}
		switch m.Format {
		case "", MetricsPrometheus, MetricsJSON:
		default:
			errs = append(errs, fmt.Errorf("metrics.format: %q is not %s or %s", m.Format, MetricsPrometheus, MetricsJSON))
		}
		for _, sc := range sortedKeys(m.Counts) {
			if _, ok := load.Lookup(sc); !ok {
				errs = append(errs, fmt.Errorf("metrics.counts: %q is not a scenario (%s)", sc, strings.Join(load.ScenarioNames(), ", ")))
			}
			if strings.TrimSpace(m.Counts[sc]) == "" {
				errs = append(errs, fmt.Errorf("metrics.counts.%s: empty: name the server's counter", sc))
			}
		}
	}
	if p := t.Profile; p != nil {
		if err := checkHTTPURL(ExpandProfile(p.URL, t.standInAddr(), time.Second)); err != nil {
			errs = append(errs, fmt.Errorf("profile.url: %w", err))
		}
	}
	return errs
}

// checkHTTPURL: an absolute http(s) URL. The error never quotes the URL,
// which may carry a token in its query.
func checkHTTPURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL with a host, got scheme %q", u.Scheme)
	}
	return nil
}

// metricsURLSecrets are the secrets the metrics and profile URLs carry:
// the values of query parameters named like secrets (?token=...,
// ?api_key=...) and a password in the userinfo. Placeholders are not
// filled in.
func (t Spec) metricsURLSecrets() []string {
	var urls []string
	if t.Metrics != nil {
		urls = append(urls, t.Metrics.URL)
	}
	if t.Profile != nil {
		urls = append(urls, t.Profile.URL)
	}
	var out []string
	for _, s := range urls {
		u, err := url.Parse(Expand(s, t.standInAddr())) // a "{addr}" host does not parse
		if err != nil {
			continue
		}
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw)
		}
		for k, vs := range u.Query() {
			if redact.SecretName(k) {
				for _, v := range vs {
					if v != "" {
						out = append(out, v)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// SafeURL is a URL fit to print: no userinfo, and the query (which may
// carry a token) replaced by a note that there was one.
func SafeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	hadQuery := u.RawQuery != "" || u.ForceQuery
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	if hadQuery {
		return u.String() + "?(query hidden)"
	}
	return u.String()
}

// Metrics formats (MetricsSpec.Format).
const (
	MetricsPrometheus = "prometheus" // the Prometheus text exposition format
	MetricsJSON       = "json"       // any JSON document: numeric leaves, by dotted path
)
