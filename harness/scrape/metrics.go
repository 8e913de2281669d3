package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/result"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A target may name an HTTP endpoint where the server
// under test publishes its own figures ("metrics" in the target file). The
// harness reads it right before a point's measured window opens and right
// after it ends, and records every numeric series' change over the window
// on the point (Point.ServerMetrics). Reading is best effort: a failure is
// recorded on the point and never fails it.

// Bounds of one metrics read.
const (
	MaxMetricSeries = 200     // series kept per point; the rest are counted in dropped_series
	MaxMetricsBody  = 1 << 20 // bytes of one response body
	MetricsTimeout  = 2 * time.Second
)

// Series types (MetricSeries.Type).
const (
	SeriesCounter = "counter"
	SeriesGauge   = "gauge"
	SeriesUntyped = "untyped"
)

// sample is one series' value in one read.
type sample struct {
	typ string
	v   float64
}

// NewClient is the HTTP client of metrics reads and profile
// fetches: no redirects (a 3xx is an error naming it, never a hop to
// another address), no proxy (the server is on loopback) and timeout.
func NewClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return &http.Client{
		Timeout:   timeout,
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Get GETs rawURL and returns the response of a 2xx status; any error
// names the URL without its query (safeURL) and says a timeout is one.
func Get(ctx context.Context, client *http.Client, rawURL, accept string) (*http.Response, error) {
	safe := target.SafeURL(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: bad request", safe)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		// A *url.Error quotes the URL, query and all: keep its cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			if ue.Timeout() {
				return nil, fmt.Errorf("GET %s: timed out after %s", safe, client.Timeout)
			}
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %v", safe, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: status %s", safe, resp.Status)
	}
	return resp, nil
}

// ReadBounded reads at most limit bytes of r; more is an error.
func ReadBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", what, limit)
	}
	return b, nil
}

// Reading is one read of the endpoint: its series, when the response
// arrived, and why it failed.
type Reading struct {
	series map[string]sample
	at     time.Time
	err    error
}

// At is when the read's response came (zero when it failed before one).
func (r Reading) At() time.Time { return r.at }

// Read reads and parses the endpoint once; now stamps its response.
func Read(ctx context.Context, client *http.Client, rawURL, format string, now func() time.Time) Reading {
	accept := "text/plain;version=0.0.4;q=1,*/*;q=0.1"
	if format == target.MetricsJSON {
		accept = "application/json"
	}
	resp, err := Get(ctx, client, rawURL, accept)
	if err != nil {
		return Reading{err: err}
	}
	defer resp.Body.Close()
	at := now()
	body, err := ReadBounded(resp.Body, MaxMetricsBody, "the body")
	if err == nil {
		var s map[string]sample
		if s, err = parseMetrics(format, body); err == nil {
			return Reading{series: s, at: at}
		}
	}
	return Reading{err: fmt.Errorf("GET %s: %w", target.SafeURL(rawURL), err)}
}

// parseMetrics parses a body in format (prometheus when empty).
func parseMetrics(format string, body []byte) (map[string]sample, error) {
	if format == target.MetricsJSON {
		return parseJSONMetrics(body)
	}
	return parsePrometheus(body)
}

// parsePrometheus parses the Prometheus text format (expfmt): counters,
// gauges and untyped series by name and labels, histograms and summaries
// as their _sum and _count (counters; a gauge histogram's are gauges).
// Values that are not finite are left out.
func parsePrometheus(body []byte) (map[string]sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("not the Prometheus text format: %w", err)
	}
	out := map[string]sample{}
	add := func(name string, labels []*dto.LabelPair, typ string, v float64) {
		if !finite(v) {
			return
		}
		m := model.Metric{model.MetricNameLabel: model.LabelValue(name)}
		for _, l := range labels {
			m[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
		}
		out[m.String()] = sample{typ: typ, v: v}
	}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetLabel(), SeriesCounter, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetLabel(), SeriesGauge, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m.GetLabel(), SeriesUntyped, m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m.GetLabel(), SeriesCounter, m.GetSummary().GetSampleSum())
				add(name+"_count", m.GetLabel(), SeriesCounter, float64(m.GetSummary().GetSampleCount()))
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				typ := SeriesCounter
				if mf.GetType() == dto.MetricType_GAUGE_HISTOGRAM {
					typ = SeriesGauge
				}
				h := m.GetHistogram()
				add(name+"_sum", m.GetLabel(), typ, h.GetSampleSum())
				count := float64(h.GetSampleCount())
				if h.SampleCountFloat != nil {
					count = h.GetSampleCountFloat()
				}
				add(name+"_count", m.GetLabel(), typ, count)
			}
		}
	}
	return out, nil
}

// parseJSONMetrics flattens a JSON document's numeric leaves into dotted
// paths ({"stats": {"conns": 3}} is stats.conns = 3; array elements are
// numbered: workers.0.busy). Strings, booleans and nulls are left out.
// The top level must be an object or an array.
func parseJSONMetrics(body []byte) (map[string]sample, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: trailing data after the document")
	}
	switch doc.(type) {
	case map[string]any, []any:
	default:
		return nil, errors.New("not a JSON object or array of metrics")
	}
	out := map[string]sample{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		join := func(k string) string {
			if path == "" {
				return k
			}
			return path + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(join(k), e)
			}
		case []any:
			for i, e := range v {
				walk(join(strconv.Itoa(i)), e)
			}
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err == nil && !math.IsInf(f, 0) {
				out[path] = sample{typ: SeriesUntyped, v: f}
			}
		}
	}
	walk("", doc)
	return out, nil
}

// Diff makes the point's record of two reads.
func Diff(format string, before, after Reading) *result.ServerMetrics {
	sm := &result.ServerMetrics{Format: format, Series: []result.MetricSeries{}}
	var errs []string
	if before.err != nil {
		errs = append(errs, "before the window: "+before.err.Error())
	}
	if after.err != nil {
		errs = append(errs, "after the window: "+after.err.Error())
	}
	sm.Error = strings.Join(errs, "; ")
	both := before.err == nil && after.err == nil
	if both {
		sm.IntervalS = after.at.Sub(before.at).Seconds()
	}
	names := map[string]bool{}
	for n := range before.series {
		names[n] = true
	}
	for n := range after.series {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	if len(sorted) > MaxMetricSeries {
		sm.DroppedSeries = len(sorted) - MaxMetricSeries
		sorted = sorted[:MaxMetricSeries]
	}
	for _, n := range sorted {
		s := result.MetricSeries{Name: n}
		b, okB := before.series[n]
		a, okA := after.series[n]
		if okB {
			s.Type, s.Before = b.typ, ptr(b.v)
		}
		if okA {
			s.Type, s.After = a.typ, ptr(a.v)
		}
		if okA && okB {
			d := a.v - b.v
			if finite(d) {
				s.Delta = ptr(d)
			}
			switch {
			case s.Type != SeriesCounter || !finite(d):
			case d < 0:
				s.Reset = true
			case sm.IntervalS > 0:
				s.RatePerS = ptr(d / sm.IntervalS)
			}
		}
		sm.Series = append(sm.Series, s)
	}
	return sm
}

func ptr[T any](v T) *T { return &v }

// finite: a value JSON can hold.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// FetchProfile GETs rawURL and saves its body at path, through a
// temporary file renamed into place; whatever an earlier run left at path
// is removed first, so a failed fetch never leaves an old profile that
// looks like this point's.
func FetchProfile(ctx context.Context, client *http.Client, rawURL, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--profile %s: %w", dir, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale %s: %w", path, err)
	}
	resp, err := Get(ctx, client, rawURL, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tmp, err := atomicfile.Create(path, "")
	if err != nil {
		return fmt.Errorf("--profile %s: %w", dir, err)
	}
	defer tmp.Abort() // a no-op once committed
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, MaxProfileBytes+1))
	switch {
	case err != nil:
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return fmt.Errorf("GET %s: body timed out after %s", target.SafeURL(rawURL), client.Timeout)
		}
		return fmt.Errorf("GET %s: read the body: %v", target.SafeURL(rawURL), err)
	case n > MaxProfileBytes:
		return fmt.Errorf("GET %s: the profile is larger than %d bytes", target.SafeURL(rawURL), MaxProfileBytes)
	case n == 0:
		return fmt.Errorf("GET %s: empty body", target.SafeURL(rawURL))
	}
	return tmp.Commit(0o600) // CreateTemp's mode, as the profile always had
}

// Bounds of one profile fetch: its body, and how long past {seconds} the
// server may take to answer.
const (
	MaxProfileBytes = 64 << 20
	ProfileSlack    = 10 * time.Second
)

// Failed is a reading that did not happen, for why.
func Failed(why error) Reading { return Reading{err: why} }
