package refserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics and parses it with Prometheus's own text parser,
// which refuses anything the format does not allow (a sample without its
// TYPE, a duplicate family, a bad value).
func (ts *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + ts.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q, want the 0.0.4 text format", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := expfmt.ResponseFormat(resp.Header); got.FormatType() != expfmt.TypeTextPlain {
		t.Errorf("Content-Type %q is not recognised as the text format (%s)", resp.Header.Get("Content-Type"), got)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("metric %s missing or not one sample", name)
	}
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return f.Metric[0].GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return f.Metric[0].GetGauge().GetValue()
	}
	t.Fatalf("metric %s has type %s", name, f.GetType())
	return 0
}

// /metrics parses as Prometheus text with the names and types the
// protocol names, each with HELP, and its counters move with traffic on
// every endpoint.
func TestMetrics(t *testing.T) {
	// The rooms rate limit's clock stands still: a's bucket never refills,
	// however slowly the machine runs the test.
	frozen := time.Now()
	ts := startWith(t, Config{RoomsRateLimit: 2}, func(s *Server) { s.now = func() time.Time { return frozen } })
	before := ts.scrape(t)
	want := map[string]dto.MetricType{
		"refserver_connections":             dto.MetricType_GAUGE,
		"refserver_rooms":                   dto.MetricType_GAUGE,
		"refserver_room_members":            dto.MetricType_GAUGE,
		"refserver_messages_received_total": dto.MetricType_COUNTER,
		"refserver_messages_sent_total":     dto.MetricType_COUNTER,
		"refserver_room_ops_total":          dto.MetricType_COUNTER,
		"refserver_rate_limited_total":      dto.MetricType_COUNTER,
		"process_cpu_seconds_total":         dto.MetricType_COUNTER,
		"process_resident_memory_bytes":     dto.MetricType_GAUGE,
	}
	for name, typ := range want {
		f := before[name]
		if f == nil {
			t.Errorf("%s missing", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s: type %s, want %s", name, f.GetType(), typ)
		}
		if f.GetHelp() == "" {
			t.Errorf("%s: no HELP", name)
		}
	}
	if v := value(t, before, "process_cpu_seconds_total"); v <= 0 {
		t.Errorf("process_cpu_seconds_total = %v", v)
	}
	if v := value(t, before, "process_resident_memory_bytes"); v <= 0 {
		t.Errorf("process_resident_memory_bytes = %v", v)
	}

	// Echo: one message in, one out.
	e := ts.dial(t, "/echo")
	e.WriteMessage(websocket.TextMessage, []byte("x"))
	if _, _, err := e.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	// Pusher: a subscribe in, connection_established and succeeded out.
	p, _ := ts.connect(t)
	subscribe(t, p, "c")
	// Rooms: two joins, a patch (op + ack), and one patch over the limit
	// (a's bucket of 2 holds its join and one patch).
	a, _ := ts.join(t, "r", "editor", "a", -1)
	b, _ := ts.join(t, "r", "viewer", "b", -1)
	patch(t, a, "p1", 1, "1")
	readRoom(t, a)
	readRoom(t, b)
	patch(t, a, "p2", 2, "2")
	if m := readRoom(t, a); m.Reason != "rate_limited" {
		t.Fatalf("second patch: %+v, want rate_limited", m)
	}

	after := ts.scrape(t)
	delta := func(name string) float64 { return value(t, after, name) - value(t, before, name) }
	got := map[string]float64{
		"refserver_connections":             value(t, after, "refserver_connections"),
		"refserver_rooms":                   value(t, after, "refserver_rooms"),
		"refserver_room_members":            value(t, after, "refserver_room_members"),
		"refserver_messages_received_total": delta("refserver_messages_received_total"),
		"refserver_room_ops_total":          delta("refserver_room_ops_total"),
		"refserver_rate_limited_total":      delta("refserver_rate_limited_total"),
	}
	wantV := map[string]float64{
		"refserver_connections":             4,
		"refserver_rooms":                   1,
		"refserver_room_members":            2,
		"refserver_messages_received_total": 1 + 1 + 4, // echo, subscribe, 2 joins + 2 patches
		"refserver_room_ops_total":          1,
		"refserver_rate_limited_total":      1,
	}
	for name, w := range wantV {
		if got[name] != w {
			t.Errorf("%s: %v, want %v", name, got[name], w)
		}
	}
	// Out: the echo, 2 Pusher frames, 2 joined, op, ack, error: 8. A frame
	// is counted once its write returns, possibly after the client read it.
	waitFor(t, func() bool {
		return value(t, ts.scrape(t), "refserver_messages_sent_total")-value(t, before, "refserver_messages_sent_total") >= 8
	})
	if d := value(t, ts.scrape(t), "refserver_messages_sent_total") - value(t, before, "refserver_messages_sent_total"); d != 8 {
		t.Errorf("refserver_messages_sent_total moved by %v, want 8", d)
	}
}
