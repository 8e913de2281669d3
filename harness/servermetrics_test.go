package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// metricsServer is an httptest server whose counter moves by 250 with
// every read; its handler can be swapped.
type metricsServer struct {
	*httptest.Server
	reads   atomic.Int64
	handler atomic.Pointer[http.HandlerFunc]
	lastURL atomic.Pointer[string]
}

func newMetricsServer(t *testing.T) *metricsServer {
	t.Helper()
	ms := &metricsServer{}
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		n := ms.reads.Add(1)
		fmt.Fprintf(w, "# TYPE req_total counter\nreq_total{path=\"/echo\"} %d\n# TYPE conns gauge\nconns %d\n", n*250, 10+n)
	})
	ms.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := r.URL.String()
		ms.lastURL.Store(&u)
		(*ms.handler.Load())(w, r)
	}))
	t.Cleanup(ms.Close)
	return ms
}

func (ms *metricsServer) set(h http.HandlerFunc) { ms.handler.Store(&h) }

func (ms *metricsServer) port(t *testing.T) int {
	return ms.Listener.Addr().(*net.TCPAddr).Port
}

// capturePoint is a pointRun with only what startCapture reads.
func capturePoint(t target.Spec, port int, window time.Duration, profileDir string) *pointRun {
	return &pointRun{
		pr:     &ProcRunner{o: planOf(knob.Options{ProfileDir: profileDir})},
		spec:   PointSpec{Index: 3, Role: result.RoleSweep, Key: result.PointKey{Batch: 10, Connections: 64, Rep: 1}},
		target: t, addr: target.Addr{Port: port}, window: window,
	}
}

// runCapture does what measure does around a window.
func runCapture(p *pointRun, window time.Duration) verdict.Outcome {
	var out verdict.Outcome
	c := p.startCapture(context.Background())
	time.Sleep(window)
	c.windowEnded(context.Background())
	c.finish(&out)
	return out
}

// TestCaptureMetricsMove: an endpoint whose counter moves between the two
// reads gives the delta and a rate over the interval between them; the
// token in the URL's query reaches the server, never the record.
func TestCaptureMetricsMove(t *testing.T) {
	ms := newMetricsServer(t)
	tg := target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/metrics?token=tok-secret-123"}}
	out := runCapture(capturePoint(tg, ms.port(t), 0, ""), 300*time.Millisecond)
	sm := out.ServerMetrics
	if sm == nil || sm.Error != "" {
		t.Fatalf("server metrics %+v", sm)
	}
	if got := *ms.lastURL.Load(); got != "/metrics?token=tok-secret-123" {
		t.Errorf("server was asked for %q", got)
	}
	if sm.Format != target.MetricsPrometheus || sm.IntervalS < 0.25 || sm.IntervalS > 5 || len(sm.Series) != 2 {
		t.Fatalf("%+v", sm)
	}
	c, g := sm.Series[1], sm.Series[0]
	if c.Name != `req_total{path="/echo"}` || c.Type != scrape.SeriesCounter || *c.Before != 250 || *c.After != 500 || *c.Delta != 250 {
		t.Errorf("counter %+v", c)
	}
	if c.RatePerS == nil || *c.RatePerS != 250/sm.IntervalS {
		t.Errorf("counter rate %v, want 250 / %v", c.RatePerS, sm.IntervalS)
	}
	if g.Name != "conns" || *g.Delta != 1 || g.RatePerS != nil {
		t.Errorf("gauge %+v", g)
	}
	if out.ProfileFile != "" || out.ProfileError != "" {
		t.Errorf("profile %q %q without --profile", out.ProfileFile, out.ProfileError)
	}
}

// TestCaptureMetricsJSON: the json format through the whole path.
func TestCaptureMetricsJSON(t *testing.T) {
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		n := ms.reads.Add(1)
		fmt.Fprintf(w, `{"stats": {"connections": %d, "version": "1.2"}}`, 60+n)
	})
	tg := target.Spec{Metrics: &result.MetricsSpec{URL: "http://{host}:{port}/stats", Format: target.MetricsJSON}}
	sm := runCapture(capturePoint(tg, ms.port(t), 0, ""), 50*time.Millisecond).ServerMetrics
	if sm == nil || sm.Error != "" || len(sm.Series) != 1 {
		t.Fatalf("%+v", sm)
	}
	if s := sm.Series[0]; s.Name != "stats.connections" || *s.Before != 61 || *s.After != 62 || s.RatePerS != nil {
		t.Errorf("%+v", s)
	}
}

// TestCaptureMetricsErrors: every failure is recorded on the point, named,
// bounded, and without the URL's query.
func TestCaptureMetricsErrors(t *testing.T) {
	ms := newMetricsServer(t)
	const token = "tok-secret-456"
	tg := target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/metrics?api_key=" + token}}
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}, "status 503 Service Unavailable"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		}, "status 302 Found"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<html>metrics moved</html>")
		}, "not the Prometheus text format"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			line := "# " + strings.Repeat("x", 1000) + "\n"
			for range scrape.MaxMetricsBody/len(line) + 1 {
				fmt.Fprint(w, line)
			}
		}, fmt.Sprintf("the body is larger than %d bytes", scrape.MaxMetricsBody)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ms.set(tt.handler)
			sm := runCapture(capturePoint(tg, ms.port(t), 0, ""), 0).ServerMetrics
			if sm == nil {
				t.Fatal("no server metrics recorded")
			}
			wantPrefix := "before the window: GET " + ms.URL + "/metrics?(query hidden): " + tt.want
			if !strings.HasPrefix(sm.Error, wantPrefix) || !strings.Contains(sm.Error, "after the window: ") {
				t.Errorf("error %q, want it to begin %q and name both reads", sm.Error, wantPrefix)
			}
			if strings.Contains(sm.Error, token) || len(sm.Series) != 0 {
				t.Errorf("%+v", sm)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		sm := runCapture(capturePoint(tg, port, 0, ""), 0).ServerMetrics
		if !strings.Contains(sm.Error, "connection refused") || strings.Contains(sm.Error, token) {
			t.Errorf("error %q", sm.Error)
		}
	})
}

// TestCaptureMetricsTimeout: a server that never answers costs each read
// scrape.MetricsTimeout, and says so.
func TestCaptureMetricsTimeout(t *testing.T) {
	ms := newMetricsServer(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tg := target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/metrics"}}
	start := time.Now()
	sm := runCapture(capturePoint(tg, ms.port(t), 0, ""), 0).ServerMetrics
	took := time.Since(start)
	want := fmt.Sprintf("before the window: GET %s/metrics: timed out after %s; after the window: GET %s/metrics: timed out after %s", ms.URL, scrape.MetricsTimeout, ms.URL, scrape.MetricsTimeout)
	if sm.Error != want {
		t.Errorf("error %q, want %q", sm.Error, want)
	}
	if took < 2*scrape.MetricsTimeout || took > 2*scrape.MetricsTimeout+10*time.Second {
		t.Errorf("two reads took %s, want each bounded by %s", took, scrape.MetricsTimeout)
	}
}

// TestCaptureInterrupted: an interrupt cuts a read short.
func TestCaptureInterrupted(t *testing.T) {
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	p := capturePoint(target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/m"}}, ms.port(t), 0, "")
	c := p.startCapture(ctx)
	cancel()
	c.windowEnded(ctx)
	var out verdict.Outcome
	start := time.Now()
	c.finish(&out)
	if time.Since(start) > scrape.MetricsTimeout {
		t.Errorf("finish took %s after an interrupt", time.Since(start))
	}
	if !strings.Contains(out.ServerMetrics.Error, "context canceled") {
		t.Errorf("error %q", out.ServerMetrics.Error)
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
