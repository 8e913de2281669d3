package scrape

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/target"
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

// captureSpec is a point's WindowSpec against port, with its profile
// saved in profileDir ("": no --profile).
func captureSpec(t target.Spec, port int, window time.Duration, profileDir string) WindowSpec {
	s := WindowSpec{Metrics: t.Metrics, Profile: t.Profile, AllowUnpinnedURL: t.AllowUnpinnedURL,
		Addr: target.Addr{Port: port}, Window: window}
	if profileDir != "" {
		s.ProfilePath = filepath.Join(profileDir, "point-3-b10-c64-r1.pprof")
	}
	return s
}

// runCapture does what the harness's measure does around a window, on a
// clock that moves by window between the two reads' responses (the
// after read starts once the before read is done): the interval is
// decided, not slept.
func runCapture(s WindowSpec, window time.Duration) Captured {
	var mu sync.Mutex
	at := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	s.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := at
		at = at.Add(window)
		return t
	}
	c := StartWindow(context.Background(), s)
	c.WindowEnded(context.Background())
	return c.Finish()
}

// TestCaptureMetricsMove: an endpoint whose counter moves between the two
// reads gives the delta and a rate over the interval between them; the
// token in the URL's query reaches the server, never the record.
func TestCaptureMetricsMove(t *testing.T) {
	ms := newMetricsServer(t)
	tg := target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/metrics?token=tok-secret-123"}}
	out := runCapture(captureSpec(tg, ms.port(t), 0, ""), 300*time.Millisecond)
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
	if c.Name != `req_total{path="/echo"}` || c.Type != SeriesCounter || *c.Before != 250 || *c.After != 500 || *c.Delta != 250 {
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
	sm := runCapture(captureSpec(tg, ms.port(t), 0, ""), 50*time.Millisecond).ServerMetrics
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
			for range MaxMetricsBody/len(line) + 1 {
				fmt.Fprint(w, line)
			}
		}, fmt.Sprintf("the body is larger than %d bytes", MaxMetricsBody)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ms.set(tt.handler)
			sm := runCapture(captureSpec(tg, ms.port(t), 0, ""), 0).ServerMetrics
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
		sm := runCapture(captureSpec(tg, port, 0, ""), 0).ServerMetrics
		if !strings.Contains(sm.Error, "connection refused") || strings.Contains(sm.Error, token) {
			t.Errorf("error %q", sm.Error)
		}
	})
}

// TestCaptureMetricsTimeout: a server that never answers costs each read
// MetricsTimeout, and says so.
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
	sm := runCapture(captureSpec(tg, ms.port(t), 0, ""), 0).ServerMetrics
	took := time.Since(start)
	want := fmt.Sprintf("before the window: GET %s/metrics: timed out after %s; after the window: GET %s/metrics: timed out after %s", ms.URL, MetricsTimeout, ms.URL, MetricsTimeout)
	if sm.Error != want {
		t.Errorf("error %q, want %q", sm.Error, want)
	}
	if took < 2*MetricsTimeout || took > 2*MetricsTimeout+10*time.Second {
		t.Errorf("two reads took %s, want each bounded by %s", took, MetricsTimeout)
	}
}

// TestCaptureInterrupted: an interrupt cuts a read short.
func TestCaptureInterrupted(t *testing.T) {
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	c := StartWindow(ctx, captureSpec(target.Spec{Metrics: &result.MetricsSpec{URL: "http://{addr}/m"}}, ms.port(t), 0, ""))
	cancel()
	c.WindowEnded(ctx)
	start := time.Now()
	out := c.Finish()
	if time.Since(start) > MetricsTimeout {
		t.Errorf("finish took %s after an interrupt", time.Since(start))
	}
	if !strings.Contains(out.ServerMetrics.Error, "context canceled") {
		t.Errorf("error %q", out.ServerMetrics.Error)
	}
}

// TestCaptureProfile: with --profile the profile URL is fetched over the
// window, {seconds} filled, and the body saved where profile_file says.
func TestCaptureProfile(t *testing.T) {
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "profile over %s s", r.URL.Query().Get("seconds"))
	})
	dir := filepath.Join(t.TempDir(), "profiles") // made by the fetch
	tg := target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/debug/pprof/profile?seconds={seconds}&token=prof-token-99"}}
	out := runCapture(captureSpec(tg, ms.port(t), 2500*time.Millisecond, dir), 0)
	want := filepath.Join(dir, "point-3-b10-c64-r1.pprof")
	if out.ProfileError != "" || out.ProfileFile != want {
		t.Fatalf("profile file %q, error %q; want %q", out.ProfileFile, out.ProfileError, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != "profile over 2 s" {
		t.Errorf("saved %q, %v", b, err)
	}
	if out.ServerMetrics != nil {
		t.Errorf("server metrics %+v without metrics", out.ServerMetrics)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCaptureProfileFails: a failed fetch is recorded (naming the status,
// never the query), and leaves no file, not even an earlier run's.
func TestCaptureProfileFails(t *testing.T) {
	ms := newMetricsServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "point-3-b10-c64-r1.pprof")
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "profiling disabled", http.StatusForbidden)
		}, "status 403 Forbidden"},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, "empty body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte("an earlier run's"), 0o644); err != nil {
				t.Fatal(err)
			}
			ms.set(tt.handler)
			tg := target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p?seconds={seconds}&token=prof-token-99"}}
			out := runCapture(captureSpec(tg, ms.port(t), time.Second, dir), 0)
			want := "GET " + ms.URL + "/p?(query hidden): " + tt.want
			if out.ProfileError != want || out.ProfileFile != "" {
				t.Errorf("profile %q, error %q; want error %q", out.ProfileFile, out.ProfileError, want)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s is there after a failed fetch: %v", path, err)
			}
		})
	}
	t.Run("no profile url", func(t *testing.T) {
		out := runCapture(captureSpec(target.Spec{}, ms.port(t), time.Second, dir), 0)
		if out.ProfileError != `the target has no "profile" url` {
			t.Errorf("error %q", out.ProfileError)
		}
	})
}

// TestCaptureProfileTooLarge: the body is bounded by MaxProfileBytes.
func TestCaptureProfileTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range MaxProfileBytes>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	dir := t.TempDir()
	out := runCapture(captureSpec(target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p"}}, ms.port(t), time.Second, dir), 0)
	if !strings.Contains(out.ProfileError, fmt.Sprintf("larger than %d bytes", MaxProfileBytes)) || out.ProfileFile != "" {
		t.Errorf("profile %q, error %q", out.ProfileFile, out.ProfileError)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}
