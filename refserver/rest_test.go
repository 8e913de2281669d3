package refserver

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
)

// Bad REST input gets the documented status with a message that says what
// is wrong, and the server keeps publishing for everyone else.
func TestRESTErrors(t *testing.T) {
	ts := start(t, Config{MaxBatch: 2, MaxBodyBytes: 4096})
	good := mustJSON(t, pusher.Event{Name: "x", Channel: "c", Data: "d"})
	tests := []struct {
		name       string
		path       string
		body       []byte
		secret     string
		wantStatus int
		wantIn     string
	}{
		{"bad signature", "/apps/app-id/events", good, "wrong-secret", 401, "auth_signature"},
		{"bad JSON", "/apps/app-id/events", []byte(`{"name":`), "app-secret", 400, "invalid JSON"},
		{"bad JSON batch", "/apps/app-id/batch_events", []byte(`[]`), "app-secret", 400, "invalid JSON"},
		{"not UTF-8", "/apps/app-id/events", []byte("{\"name\":\"x\xff\",\"channel\":\"c\"}"), "app-secret", 400, "UTF-8"},
		{"data not a string", "/apps/app-id/events", []byte(`{"name":"x","channel":"c","data":{"a":1}}`), "app-secret", 400, `"data": want a string`},
		{"unknown app", "/apps/other/events", good, "app-secret", 404, `unknown app id "other"`},
		{"no name", "/apps/app-id/events", mustJSON(t, pusher.Event{Channel: "c"}), "app-secret", 400, `"name"`},
		{"no channel", "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x"}), "app-secret", 400, `"channel" or "channels"`},
		{"bad channel", "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x", Channel: "a b"}), "app-secret", 400, `"channels"`},
		{"empty batch", "/apps/app-id/batch_events", mustJSON(t, pusher.BatchEvents{}), "app-secret", 400, "no events"},
		{"batch too big", "/apps/app-id/batch_events", mustJSON(t, pusher.BatchEvents{Batch: []pusher.Event{
			{Name: "x", Channel: "c"}, {Name: "x", Channel: "c"}, {Name: "x", Channel: "c"}}}), "app-secret", 400, "--max-batch"},
		{"bad event in batch", "/apps/app-id/batch_events", mustJSON(t, pusher.BatchEvents{Batch: []pusher.Event{
			{Name: "x", Channel: "c"}, {Channel: "c"}}}), "app-secret", 400, `batch[1]."name"`},
		{"body too large", "/apps/app-id/events", []byte(`{"name":"x","channel":"c","data":"` + strings.Repeat("a", 5000) + `"}`),
			"app-secret", 413, "--max-body-bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.post(t, tt.path, tt.body, tt.secret)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantIn) {
				t.Errorf("got %d %q, want %d containing %q", status, body, tt.wantStatus, tt.wantIn)
			}
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		status, body := ts.postRaw(t, "/apps/app-id/events", good)
		if status != 401 || !strings.Contains(body, "auth_key: missing parameter") {
			t.Errorf("got %d %q, want 401 naming auth_key", status, body)
		}
	})
	t.Run("stale", func(t *testing.T) {
		q := pusher.Sign("POST", "/apps/app-id/events", nil, "app-key", "app-secret", time.Now().Add(-time.Hour).Unix(), good)
		status, body := ts.postRaw(t, "/apps/app-id/events?"+q.Encode(), good)
		if status != 401 || !strings.Contains(body, "auth_timestamp") {
			t.Errorf("got %d %q, want 401 naming auth_timestamp", status, body)
		}
	})

	// None of that stopped the server.
	c, _ := ts.connect(t)
	subscribe(t, c, "c")
	if status, body := ts.post(t, "/apps/app-id/events", good, "app-secret"); status != 200 {
		t.Fatalf("good publish after bad ones: %d %q", status, body)
	}
	if m := readMsg(t, c); m.Event != "x" {
		t.Errorf("got %q, want x", m.Event)
	}
	st := ts.health(t)
	if want := uint64(len(tests) + 2); st.RESTErrors != want {
		t.Errorf("rest_errors = %d, want %d", st.RESTErrors, want)
	}
}
