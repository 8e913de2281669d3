// Package probe is a readiness probe: how the harness knows a server is
// up (a target's "ready", --ready, a fault's restart, an external
// server). Parse reads one ("tcp:HOST:PORT", "http://..." or
// "https://...", "log:REGEX") with the errors a target file's check
// quotes; Check makes one attempt. It is a leaf so that the target file's
// checks (harness/target) validate a probe without linking the
// supervisor (harness/supervise), whose WaitReady polls it.
package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Probe kinds.
const (
	TCP  = "tcp"  // a TCP connect to Addr succeeds
	HTTP = "http" // GET URL answers 2xx
	Log  = "log"  // Regexp matches the process's log file
)

// Probe is a parsed readiness probe. *Probe implements flag.Value.
type Probe struct {
	Kind   string
	Addr   string         // tcp: host:port
	URL    string         // http: http:// or https:// URL
	Regexp *regexp.Regexp // log
}

// Parse reads a readiness probe:
//
//	tcp:HOST:PORT         a TCP connect succeeds (tcp:127.0.0.1:8080, tcp:[::1]:8080)
//	http://HOST[:PORT]/P  a GET answers 2xx (https:// too)
//	log:REGEX             REGEX (Go syntax) matches the log file
func Parse(s string) (Probe, error) {
	bad := func(err error) (Probe, error) {
		return Probe{}, fmt.Errorf("readiness probe %q: %w", s, err)
	}
	switch {
	case strings.HasPrefix(s, "tcp:"):
		addr := strings.TrimPrefix(s, "tcp:")
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return bad(err)
		}
		if host == "" {
			return bad(errors.New("no host (want tcp:HOST:PORT)"))
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad(fmt.Errorf("port %q is not 1-65535", port))
		}
		return Probe{Kind: TCP, Addr: addr}, nil
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil {
			return bad(err)
		}
		if u.Host == "" {
			return bad(errors.New("no host in URL"))
		}
		return Probe{Kind: HTTP, URL: s}, nil
	case strings.HasPrefix(s, "log:"):
		expr := strings.TrimPrefix(s, "log:")
		if expr == "" {
			return bad(errors.New("empty regular expression"))
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return bad(err)
		}
		return Probe{Kind: Log, Regexp: re}, nil
	}
	return bad(errors.New("want tcp:HOST:PORT, http://URL or log:REGEX"))
}

// String renders the probe as Parse reads it.
func (p Probe) String() string {
	switch p.Kind {
	case TCP:
		return "tcp:" + p.Addr
	case HTTP:
		return p.URL
	case Log:
		return "log:" + p.Regexp.String()
	}
	return ""
}

// Set implements flag.Value.
func (p *Probe) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// probeClient keeps no idle connection: the server under test must not
// carry one of ours through the measured window.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Check makes one attempt (logPath is the log file of a log: probe);
// nil means ready.
func (p Probe) Check(ctx context.Context, logPath string) error {
	switch p.Kind {
	case TCP:
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.Addr)
		if err != nil {
			return err
		}
		return c.Close()
	case HTTP:
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
		if err != nil {
			return err
		}
		resp, err := probeClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("GET %s: %s", p.URL, resp.Status)
		}
		return nil
	case Log:
		if logPath == "" {
			return errors.New("log probe on a process without a log file")
		}
		b, err := os.ReadFile(logPath)
		if err != nil {
			return err
		}
		if !p.Regexp.Match(b) {
			return fmt.Errorf("log %s does not match %q yet", logPath, p.Regexp)
		}
		return nil
	}
	return fmt.Errorf("readiness probe of unknown kind %q", p.Kind)
}
