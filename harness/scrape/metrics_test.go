package scrape

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

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
	before := Reading{at: t0, series: map[string]sample{
		"c":      {SeriesCounter, 100},
		"g":      {SeriesGauge, 10},
		"reset":  {SeriesCounter, 500},
		"gone":   {SeriesGauge, 1},
		"u":      {SeriesUntyped, 1},
		"c_flat": {SeriesCounter, 7},
	}}
	after := Reading{at: t0.Add(2 * time.Second), series: map[string]sample{
		"c":      {SeriesCounter, 300},
		"g":      {SeriesGauge, 4},
		"reset":  {SeriesCounter, 20},
		"new":    {SeriesCounter, 9},
		"u":      {SeriesUntyped, 3},
		"c_flat": {SeriesCounter, 7},
	}}
	got := Diff(target.MetricsPrometheus, before, after)
	f := func(v float64) *float64 { return &v }
	want := &result.ServerMetrics{Format: target.MetricsPrometheus, IntervalS: 2, Series: []result.MetricSeries{
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
	failed := Diff(target.MetricsPrometheus, before, Reading{err: fmt.Errorf("GET x: status 503 Service Unavailable")})
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
	read := Reading{at: time.Now(), series: map[string]sample{}}
	for i := range MaxMetricSeries + 37 {
		read.series[fmt.Sprintf("s%04d", i)] = sample{SeriesGauge, float64(i)}
	}
	got := Diff(target.MetricsJSON, read, read)
	if len(got.Series) != MaxMetricSeries || got.DroppedSeries != 37 {
		t.Fatalf("%d series, %d dropped; want %d and 37", len(got.Series), got.DroppedSeries, MaxMetricSeries)
	}
	if first, last := got.Series[0].Name, got.Series[MaxMetricSeries-1].Name; first != "s0000" || last != fmt.Sprintf("s%04d", MaxMetricSeries-1) {
		t.Errorf("kept %s .. %s, want the first by name", first, last)
	}
}

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
