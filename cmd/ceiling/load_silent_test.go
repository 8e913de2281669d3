package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// fakePusher is a Pusher endpoint whose WebSocket side is refserver (a
// reverse proxy) and whose REST side answers POSTs with answer(n), n
// counting from 1; answer returns "" to pass the request on to refserver.
// It stands for the servers of issue 8 item 8, which answer a bad
// signature or an unknown app id with HTTP 200 and the error in the body.
func fakePusher(t *testing.T, answer func(n int64) string) string {
	t.Helper()
	target, _ := neturl.Parse("http://" + startRefserver(t))
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if !strings.HasPrefix(r.URL.Path, "/apps/") || r.URL.Query().Get("auth_signature") == "" {
				t.Errorf("unexpected request %s %s", r.Method, r.URL)
			}
			if body := answer(n.Add(1)); body != "" {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(body)) // 200
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return "ws" + strings.TrimPrefix(front.URL, "http")
}

const refused = `{"code":401,"message":"Invalid signature: Expected HMAC SHA256 hex digest"}`

// runLoadFailing runs `ceiling load` expecting exit status 1 and returns
// the error, the report and the JSON document.
func runLoadFailing(t *testing.T, args ...string) (error, string, load.Result) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	err := run(append([]string{"load", "--quiet", "--json", jsonPath}, args...), &stdout, &stderr)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v (exit %d), want exit 1\n%s", err, exitCode(err), stdout.String())
	}
	var r load.Result
	b, rerr := os.ReadFile(jsonPath)
	if rerr != nil {
		t.Fatalf("--json not written: %v", rerr)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return err, stdout.String(), r
}

// The preflight publish is answered 200 with {"code":401,...}: the run
// stops before any load, with the body's error, and summary.failure says so.
func TestLoadFanoutPreflightErrorIn200Body(t *testing.T) {
	url := fakePusher(t, func(int64) string { return refused })
	err, report, r := runLoadFailing(t, "--scenario", "fanout", "--url", url, "--connections", "4", "--duration", "1s", "--warmup", "100ms")
	for _, want := range []string{"preflight", "HTTP 200", "Invalid signature", "--secret"} {
		if !strings.Contains(err.Error(), want) || !strings.Contains(r.Summary.Failure, want) {
			t.Errorf("error %q / failure %q does not say %q", err, r.Summary.Failure, want)
		}
	}
	if !strings.HasPrefix(report, "FAILED: preflight") {
		t.Errorf("report:\n%s", report)
	}
	if r.Summary.ConnectionsOpen != 0 {
		t.Errorf("%d subscribers connected after a failed preflight", r.Summary.ConnectionsOpen)
	}
	// Every point would be refused the same: a sweep stops at the first.
	if !r.Summary.Refused {
		t.Error("summary.refused is false for a refused signature")
	}
}

// The server accepts the preflight publish (200 {}) but never delivers it.
func TestLoadFanoutPreflightNotDelivered(t *testing.T) {
	url := fakePusher(t, func(int64) string { return "{}" })
	err, _, r := runLoadFailing(t, "--scenario", "fanout", "--url", url, "--connections", "4", "--duration", "1s", "--warmup", "100ms")
	if !strings.Contains(err.Error(), "did not reach its subscriber") || !strings.Contains(r.Summary.Failure, "nothing delivered") || !r.Summary.Refused {
		t.Errorf("error %q, failure %q, refused %v (want true)", err, r.Summary.Failure, r.Summary.Refused)
	}
}

// The preflight gets through, then every publish is answered 200 with an
// error in the body: each counts as an error by reason, and a run that
// delivered nothing fails (summary.failure), so a sweep fails the point
// instead of judging a throughput of zero.
func TestLoadFanoutErrorIn200BodyDuringRun(t *testing.T) {
	url := fakePusher(t, func(n int64) string {
		if n == 1 {
			return "" // the preflight reaches refserver
		}
		return refused
	})
	err, report, r := runLoadFailing(t, "--scenario", "fanout", "--url", url, "--connections", "4", "--channels", "2",
		"--duration", "500ms", "--warmup", "100ms")
	s, f := r.Summary, fanoutOf(t, r)
	if s.ErrorsByReason["publish_body_code_401"] == 0 || f.HTTPFailures["body_code_401"] != s.ErrorsByReason["publish_body_code_401"] {
		t.Errorf("errors by reason %v, http failures %v; want publish_body_code_401", s.ErrorsByReason, f.HTTPFailures)
	}
	if f.EventsPublished != 0 || f.Delivered != 0 || s.AchievedOpsPerS != 0 || s.AttemptedOpsPerS == 0 {
		t.Errorf("published %d delivered %d achieved %v attempted %v; want nothing counted as published or achieved",
			f.EventsPublished, f.Delivered, s.AchievedOpsPerS, s.AttemptedOpsPerS)
	}
	if !strings.Contains(err.Error(), "nothing arrived") || !strings.Contains(s.Failure, "publish_body_code_401") {
		t.Errorf("error %q, failure %q", err, s.Failure)
	}
	if !strings.HasPrefix(report, "FAILED: ") {
		t.Errorf("report:\n%s", report)
	}
}

// Some publishes refused in the body, the rest delivered: the run
// measures, counts the refusals by reason, and expects deliveries only of
// the accepted ones.
func TestLoadFanoutSomeErrorsIn200Body(t *testing.T) {
	url := fakePusher(t, func(n int64) string {
		if n > 1 && n%3 == 0 {
			return refused
		}
		return ""
	})
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"load", "--quiet", "--json", jsonPath, "--scenario", "fanout", "--url", url, "--connections", "4", "--channels", "2",
		"--duration", "500ms", "--warmup", "100ms"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var r load.Result
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "ERRORS: ") || !strings.Contains(stdout.String(), "attempted") {
		t.Errorf("report does not lead with the errors or hides the attempted rate:\n%s", stdout.String())
	}
	s, f := r.Summary, fanoutOf(t, r)
	if s.ErrorsByReason["publish_body_code_401"] == 0 || s.Failure != "" {
		t.Errorf("errors by reason %v, failure %q", s.ErrorsByReason, s.Failure)
	}
	if f.Delivered != f.DeliveriesExpected || f.EventsPublished == 0 || f.Duplicates != 0 {
		t.Errorf("delivered %d of %d expected, %d duplicates, %d published", f.Delivered, f.DeliveriesExpected, f.Duplicates, f.EventsPublished)
	}
	if s.AchievedOpsPerS >= s.AttemptedOpsPerS {
		t.Errorf("achieved %v ops/s, attempted %v: achieved must count successes only", s.AchievedOpsPerS, s.AttemptedOpsPerS)
	}
}

// Issue 8 item 10: publishes that the server delivered but whose answer
// the generator counted as failed (here a proxy passes every fourth
// publish on and then answers 504) make more deliveries than expected.
// They are reported as duplicates; delivered_pct never goes above 100;
// achieved counts only the publishes that succeeded.
func TestLoadFanoutDeliveriesBeyondExpected(t *testing.T) {
	target, _ := neturl.Parse("http://" + startRefserver(t))
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if k := n.Add(1); k > 1 && k%4 == 0 {
				proxy.ServeHTTP(httptest.NewRecorder(), r) // delivered...
				http.Error(w, "gateway timeout", http.StatusGatewayTimeout)
				return // ...but reported as failed
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"load", "--quiet", "--json", jsonPath, "--scenario", "fanout", "--url", "ws" + strings.TrimPrefix(front.URL, "http"),
		"--connections", "4", "--channels", "2", "--rate", "200", "--duration", "500ms", "--warmup", "100ms"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var r load.Result
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	s, f := r.Summary, fanoutOf(t, r)
	if f.Duplicates == 0 || f.Delivered != f.DeliveriesExpected+f.Duplicates {
		t.Errorf("delivered %d, expected %d, duplicates %d; want delivered = expected + duplicates > expected", f.Delivered, f.DeliveriesExpected, f.Duplicates)
	}
	if f.DeliveredPct != 100 {
		t.Errorf("delivered_pct %v, want 100 (every expected delivery arrived, the extra ones are duplicates)", f.DeliveredPct)
	}
	if s.ErrorsByReason["publish_status_504"] == 0 || s.AchievedOpsPerS >= s.AttemptedOpsPerS {
		t.Errorf("errors %v, achieved %v, attempted %v", s.ErrorsByReason, s.AchievedOpsPerS, s.AttemptedOpsPerS)
	}
	if !strings.Contains(stdout.String(), "duplicates") || !strings.Contains(stdout.String(), "(100.00%)") {
		t.Errorf("report:\n%s", stdout.String())
	}
}
