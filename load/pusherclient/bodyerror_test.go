package pusherclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/pusher"
)

// Some servers answer a refused publish with 200 and the error in the
// body; that is a *BodyError, counted by its code, never a success.
func TestErrorIn200Body(t *testing.T) {
	for _, tt := range []struct {
		body   string
		reason string // "" for success
	}{
		{`{}`, ""},
		{"{}\n", ""},
		{``, ""},
		{`{"ok":true}`, ""},
		{`{"batch":[{},{}]}`, ""},
		{`{"code":200}`, ""},
		{`{"error":null}`, ""},
		{`{"code":401,"message":"Invalid signature: you should have sent HmacSHA256Hex(...)"}`, "body_code_401"},
		{` {"message":"Unknown app","code":404} `, "body_code_404"},
		{`{"error":"Invalid app id"}`, "body_error"},
		{`{"code":403,"message":"` + strings.Repeat("x", 6000) + `"}`, "body_code_403"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(tt.body))
		}))
		c := New(srv.URL, "1", "k", "s", nil)
		err := c.Trigger(context.Background(), pusher.Event{Name: "e", Channel: "c", Data: "d"})
		srv.Close()
		if got := Reason(err); got != tt.reason {
			t.Errorf("body %.40q: Reason(%v) = %q, want %q", tt.body, err, got, tt.reason)
		}
		var be *BodyError
		if tt.reason != "" && (!errors.As(err, &be) || be.Status != 200 || !strings.Contains(err.Error(), "message")) && tt.reason != "body_error" {
			t.Errorf("body %.40q: %v, want a *BodyError carrying the body", tt.body, err)
		}
	}
}
