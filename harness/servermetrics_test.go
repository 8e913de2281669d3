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

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

const promText = `# HELP ws_messages_total Messages echoed.
# TYPE ws_messages_total counter
ws_messages_total{dir="in",conn="ws"} 1027
ws_messages_total{dir="out",conn="ws"} 1000
# TYPE ws_connections gauge
ws_connections 64
# A line without TYPE is untyped.
legacy_thing 3.5
# TYPE rtt_seconds histogram
rtt_seconds_bucket{le="0.001"} 10
rtt_seconds_bucket{le="+Inf"} 12
rtt_seconds_sum 0.25
rtt_seconds_count 12
# TYPE gc_pause_seconds summary
gc_pause_seconds{gen="young",quantile="0.5"} 0.001
gc_pause_seconds_sum{gen="young"} 0.5
gc_pause_seconds_count{gen="young"} 7
# TYPE weird gauge
weird NaN
`

// TestParsePrometheus: counters, gauges and untyped series by name and
// labels (Prometheus's own sorted label form), histograms and summaries
// as _sum and _count only, NaN left out.
func TestParsePrometheus(t *testing.T) {
	got, err := parsePrometheus([]byte(promText))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sample{
		`ws_messages_total{conn="ws", dir="in"}`:  {SeriesCounter, 1027},
		`ws_messages_total{conn="ws", dir="out"}`: {SeriesCounter, 1000},
		`ws_connections`:                      {SeriesGauge, 64},
		`legacy_thing`:                        {SeriesUntyped, 3.5},
		`rtt_seconds_sum`:                     {SeriesCounter, 0.25},
		`rtt_seconds_count`:                   {SeriesCounter, 12},
		`gc_pause_seconds_sum{gen="young"}`:   {SeriesCounter, 0.5},
		`gc_pause_seconds_count{gen="young"}`: {SeriesCounter, 7},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{})); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestParseGarbage(t *testing.T) {
	for _, tt := range []struct {
		format, body, want string
	}{
		{target.MetricsPrometheus, "<html><body>Not here</body></html>\n", "not the Prometheus text format"},
		{target.MetricsPrometheus, "ws_connections sixty-four\n", "not the Prometheus text format"},
		{target.MetricsPrometheus, "# TYPE x counter\nx{a=\"1\" 3\n", "not the Prometheus text format"},
		{target.MetricsJSON, "<html>", "not JSON"},
		{target.MetricsJSON, `{"a": 1} {"b": 2}`, "trailing data"},
		{target.MetricsJSON, `42`, "not a JSON object or array"},
		{target.MetricsJSON, ``, "not JSON"},
	} {
		_, err := parseMetrics(tt.format, []byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q: error %v, want one saying %q", tt.format, tt.body, err, tt.want)
		}
	}
}

// TestParseJSONMetrics: numeric leaves by dotted path, array elements
// numbered, everything else left out.
func TestParseJSONMetrics(t *testing.T) {
	body := `{"stats": {"connections": 64, "messages": {"in": 1e3, "out": 999}},
		"workers": [{"busy": 0.5}, {"busy": 0.25}], "name": "x", "up": true, "none": null, "huge": 1e400}`
	got, err := parseJSONMetrics([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sample{
		"stats.connections":  {SeriesUntyped, 64},
		"stats.messages.in":  {SeriesUntyped, 1000},
		"stats.messages.out": {SeriesUntyped, 999},
		"workers.0.busy":     {SeriesUntyped, 0.5},
		"workers.1.busy":     {SeriesUntyped, 0.25},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{})); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestDiffMetrics(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := metricsRead{at: t0, series: map[string]sample{
		"c":      {SeriesCounter, 100},
		"g":      {SeriesGauge, 10},
		"reset":  {SeriesCounter, 500},
		"gone":   {SeriesGauge, 1},
		"u":      {SeriesUntyped, 1},
		"c_flat": {SeriesCounter, 7},
	}}
	after := metricsRead{at: t0.Add(2 * time.Second), series: map[string]sample{
		"c":      {SeriesCounter, 300},
		"g":      {SeriesGauge, 4},
		"reset":  {SeriesCounter, 20},
		"new":    {SeriesCounter, 9},
		"u":      {SeriesUntyped, 3},
		"c_flat": {SeriesCounter, 7},
	}}
	got := diffMetrics(target.MetricsPrometheus, before, after)
	f := func(v float64) *float64 { return &v }
	want := &ServerMetrics{Format: target.MetricsPrometheus, IntervalS: 2, Series: []MetricSeries{
		{Name: "c", Type: SeriesCounter, Before: f(100), After: f(300), Delta: f(200), RatePerS: f(100)},
		{Name: "c_flat", Type: SeriesCounter, Before: f(7), After: f(7), Delta: f(0), RatePerS: f(0)},
		{Name: "g", Type: SeriesGauge, Before: f(10), After: f(4), Delta: f(-6)},
		{Name: "gone", Type: SeriesGauge, Before: f(1)},
		{Name: "new", Type: SeriesCounter, After: f(9)},
		{Name: "reset", Type: SeriesCounter, Before: f(500), After: f(20), Delta: f(-480), Reset: true},
		{Name: "u", Type: SeriesUntyped, Before: f(1), After: f(3), Delta: f(2)},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The JSON form: null for a side that was missing, no NaN anywhere.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"name":"gone","type":"gauge","before":1,"after":null}`) {
		t.Errorf("JSON %s", b)
	}

	// A failed read: the error names the side, the other read's series
	// stay, nothing has a delta or an interval.
	failed := diffMetrics(target.MetricsPrometheus, before, metricsRead{err: fmt.Errorf("GET x: status 503 Service Unavailable")})
	if failed.Error != "after the window: GET x: status 503 Service Unavailable" || failed.IntervalS != 0 || len(failed.Series) != 6 {
		t.Errorf("failed after read: %+v", failed)
	}
	for _, s := range failed.Series {
		if s.After != nil || s.Delta != nil || s.RatePerS != nil {
			t.Errorf("series %+v of a failed after read", s)
		}
	}
}

// TestDiffMetricsBound: at most MaxMetricSeries series, the first by name,
// and the rest counted.
func TestDiffMetricsBound(t *testing.T) {
	read := metricsRead{at: time.Now(), series: map[string]sample{}}
	for i := range MaxMetricSeries + 37 {
		read.series[fmt.Sprintf("s%04d", i)] = sample{SeriesGauge, float64(i)}
	}
	got := diffMetrics(target.MetricsJSON, read, read)
	if len(got.Series) != MaxMetricSeries || got.DroppedSeries != 37 {
		t.Fatalf("%d series, %d dropped; want %d and 37", len(got.Series), got.DroppedSeries, MaxMetricSeries)
	}
	if first, last := got.Series[0].Name, got.Series[MaxMetricSeries-1].Name; first != "s0000" || last != fmt.Sprintf("s%04d", MaxMetricSeries-1) {
		t.Errorf("kept %s .. %s, want the first by name", first, last)
	}
}

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
		pr:     &ProcRunner{o: &Plan{Options: knob.Options{ProfileDir: profileDir}}},
		spec:   PointSpec{Index: 3, Role: RoleSweep, Key: PointKey{Batch: 10, Connections: 64, Rep: 1}},
		target: t, addr: target.Addr{Port: port}, window: window,
	}
}

// runCapture does what measure does around a window.
func runCapture(p *pointRun, window time.Duration) Outcome {
	var out Outcome
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
	tg := target.Spec{Metrics: &MetricsSpec{URL: "http://{addr}/metrics?token=tok-secret-123"}}
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
	tg := target.Spec{Metrics: &MetricsSpec{URL: "http://{host}:{port}/stats", Format: target.MetricsJSON}}
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
	tg := target.Spec{Metrics: &MetricsSpec{URL: "http://{addr}/metrics?api_key=" + token}}
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
	tg := target.Spec{Metrics: &MetricsSpec{URL: "http://{addr}/metrics"}}
	start := time.Now()
	sm := runCapture(capturePoint(tg, ms.port(t), 0, ""), 0).ServerMetrics
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
	p := capturePoint(target.Spec{Metrics: &MetricsSpec{URL: "http://{addr}/m"}}, ms.port(t), 0, "")
	c := p.startCapture(ctx)
	cancel()
	c.windowEnded(ctx)
	var out Outcome
	start := time.Now()
	c.finish(&out)
	if time.Since(start) > MetricsTimeout {
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
	r := &Result{Curve: []Point{{ServerMetrics: &ServerMetrics{
		Series: []MetricSeries{{Name: `logins{user="secret-user-x"}`, Before: &f}},
		Error:  "before the window: secret-user-x",
	}, ProfileError: "secret-user-x"}}}
	RedactResult(r, redact.New("secret-user-x"))
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "secret-user-x") {
		t.Errorf("secret left in %s", b)
	}
}
