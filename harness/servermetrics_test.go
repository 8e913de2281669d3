package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// TestCaptureRecorded: the point's window capture (scrape.Window) gets
// the target's metrics and profile, the scenario's count series and the
// point's profile path, and what it found lands on the Outcome.
func TestCaptureRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p" {
			fmt.Fprint(w, "a profile")
			return
		}
		fmt.Fprint(w, "# TYPE req_total counter\nreq_total 7\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	plan := planOf(knob.Options{ProfileDir: dir, Scenario: "echo"})
	s := pointSetup{
		spec:     PointSpec{Index: 3, Role: result.RoleSweep, Key: result.PointKey{Batch: 10, Connections: 64, Rep: 1}},
		scenario: plan.Point.Scenario,
		target: target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/m", Counts: map[string]string{"echo": "req_total"}},
			Profile: &target.ProfileSpec{URL: "http://{addr}/p"}},
		window: time.Second,
	}
	set := &serverSet{addr: target.Addr{Port: srv.Listener.Addr().(*net.TCPAddr).Port}}
	c := scrape.StartWindow(context.Background(), captureSpec(s, set, pointFiles{}, plan.Point.ProfileDir))
	c.WindowEnded(context.Background())
	var out verdict.Outcome
	recordCapture(c, &out)
	if want := scrape.ProfilePath(dir, s.spec.Index, s.spec.Key); out.ProfileFile != want || out.ProfileError != "" {
		t.Errorf("profile %q, error %q; want %q", out.ProfileFile, out.ProfileError, want)
	}
	if sm := out.ServerMetrics; sm == nil || sm.Error != "" || len(sm.Series) != 1 || out.CountSeries != "req_total" || out.CountSkip != "" {
		t.Errorf("server metrics %+v, count series %q (%q)", sm, out.CountSeries, out.CountSkip)
	}
}

// TestServerMetricsRedacted: the point's record goes through the result's
// redaction like every other string.
func TestServerMetricsRedacted(t *testing.T) {
	f := 1.0
	r := &result.Result{Curve: []result.Point{{ServerMetrics: &result.ServerMetrics{
		Series: []result.MetricSeries{{Name: `logins{user="secret-user-x"}`, Before: &f}},
		Error:  "before the window: secret-user-x",
	}, ProfileError: "secret-user-x"}}}
	result.RedactResult(r, redact.New("secret-user-x"))
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "secret-user-x") {
		t.Errorf("secret left in %s", b)
	}
}
