package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/redact"
)

func TestSafeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:9/metrics":                      "http://127.0.0.1:9/metrics",
		"http://u:pw-secret@127.0.0.1:9/m?token=abc#frag": "http://127.0.0.1:9/m?(query hidden)",
		"http://127.0.0.1:9/m?":                           "http://127.0.0.1:9/m?(query hidden)",
		"http://%zz":                                      "(an unparsable URL)",
	} {
		if got := SafeURL(in); got != want {
			t.Errorf("SafeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTargetMetricsFields: the target file's "metrics" and "profile" are
// read and checked (errors name the field, never the URL's query), and
// their URLs' secret query values and passwords are secrets.
func TestTargetMetricsFields(t *testing.T) {
	dir := t.TempDir()
	write := func(extra string) string {
		p := filepath.Join(dir, "t.json")
		body := `{"name": "x", "command": ["srv", "--addr", "{addr}"], "echo_url": "ws://{addr}/", "ready": "tcp:{addr}"` + extra + `}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tg, err := Load(write(`, "metrics": {"url": "http://{addr}/metrics?token=query-token-1", "format": "json"},
		"profile": {"url": "http://admin:profile-pass-2@{addr}/debug/pprof/profile?seconds={seconds}"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Metrics.Format != MetricsJSON || !strings.HasSuffix(tg.Profile.URL, "seconds={seconds}") {
		t.Errorf("%+v %+v", tg.Metrics, tg.Profile)
	}
	set := redact.New(tg.Secrets()...)
	if got := set.String("GET /metrics?token=query-token-1 as admin:profile-pass-2"); got != "GET /metrics?token=REDACTED as admin:REDACTED" {
		t.Errorf("secrets of the URLs not redacted: %q", got)
	}

	for _, tt := range []struct{ extra, want string }{
		{`, "metrics": {"url": "http://{addr}/m", "format": "openmetrics"}`, `metrics.format: "openmetrics" is not prometheus or json`},
		{`, "metrics": {"url": "ws://{addr}/m?token=hide-me-please"}`, `metrics.url: want an http:// or https:// URL with a host, got scheme "ws"`},
		{`, "metrics": {}`, `metrics.url: empty`},
		{`, "profile": {"url": "/debug/pprof/profile"}`, `profile.url: want an http:// or https:// URL`},
		{`, "metrics": {"url": "http://{addr}/m?token=short"}`, `metrics.url/profile.url (a secret query value or password): a secret of 5 characters is too short`},
		{`, "metrics": {"url": "http://{addr}/m", "fromat": "json"}`, `unknown field "fromat"`},
		{`, "metrics": {"url": "http://{addr}/m", "counts": {"ecko": "x_total"}}`, `metrics.counts: "ecko" is not a scenario`},
		{`, "metrics": {"url": "http://{addr}/m", "counts": {"echo": " "}}`, `metrics.counts.echo: empty`},
	} {
		_, err := Load(write(tt.extra))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.extra, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hide-me-please") {
			t.Errorf("the error quotes the URL's query: %v", err)
		}
	}
}
