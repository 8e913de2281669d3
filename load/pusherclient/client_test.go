package pusherclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
)

const (
	appID  = "app-id"
	key    = "app-key"
	secret = "app-secret"
)

// setup starts a REST server on loopback that verifies every request's
// signature with pusher.Verify, as refserver does, and records the bodies.
func setup(t *testing.T) (*Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	mux := http.NewServeMux()
	handle := func(path string, into func([]byte) error) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if err := pusher.Verify(r.Method, r.URL.Path, r.URL.Query(), key, secret, time.Now(), body); err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			if r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "want application/json", http.StatusBadRequest)
				return
			}
			if err := into(body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Write([]byte("{}"))
		})
	}
	handle(pusher.EventsPath(appID), func(b []byte) error {
		var ev pusher.Event
		if err := strictUnmarshal(b, &ev); err != nil {
			return err
		}
		rec.add(ev)
		return nil
	})
	handle(pusher.BatchEventsPath(appID), func(b []byte) error {
		var be pusher.BatchEvents
		if err := strictUnmarshal(b, &be); err != nil {
			return err
		}
		rec.add(be.Batch...)
		return nil
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return New(srv.URL, appID, key, secret, srv.Client()), rec
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytesReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

type recorder struct {
	mu     sync.Mutex
	events []pusher.Event
}

func (r *recorder) add(evs ...pusher.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
}

func (r *recorder) got() []pusher.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pusher.Event(nil), r.events...)
}

func TestTrigger(t *testing.T) {
	t.Parallel()
	c, rec := setup(t)
	want := []pusher.Event{
		{Name: "tick", Channel: "ch-0", Data: `{"ts":123,"text":"quote \" and \\ and é and \u2028"}`},
		{Name: "multi", Channels: []string{"a", "b"}, Data: "", SocketID: "1.2"},
	}
	for _, ev := range want {
		if err := c.Trigger(context.Background(), ev); err != nil {
			t.Fatalf("Trigger(%+v): %v", ev, err)
		}
	}
	if d := cmp.Diff(want, rec.got()); d != "" {
		t.Errorf("server received (-want +got):\n%s", d)
	}
}

func TestTriggerBatchConcurrent(t *testing.T) {
	t.Parallel()
	c, rec := setup(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				batch := []pusher.Event{
					{Name: "e", Channel: "ch", Data: string(rune('a'+g)) + string(rune('a'+i%26))},
					{Name: "e", Channel: "ch", Data: "second"},
				}
				if err := c.TriggerBatch(context.Background(), batch); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(rec.got()); got != 8*20*2 {
		t.Errorf("server received %d events, want %d", got, 8*20*2)
	}
}

func TestBodyMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	evs := []pusher.Event{
		{Name: "n", Channel: "c", Data: "d"},
		{Name: "<html>&", Channels: []string{"x", "y"}, Data: "\x01\t\n", SocketID: "s"},
		{},
	}
	for _, ev := range evs {
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var wantObj, gotObj any
		json.Unmarshal(want, &wantObj)
		got := appendEvent(nil, &ev)
		if err := json.Unmarshal(got, &gotObj); err != nil {
			t.Fatalf("appendEvent(%+v) = %s: %v", ev, got, err)
		}
		if d := cmp.Diff(wantObj, gotObj); d != "" {
			t.Errorf("appendEvent(%+v) (-encoding/json +ours):\n%s", ev, d)
		}
	}
}

func TestWrongSecretIsHTTPError401(t *testing.T) {
	t.Parallel()
	c, _ := setup(t)
	bad := New(c.base.String(), appID, key, "not-the-secret", nil)
	err := bad.Trigger(context.Background(), pusher.Event{Name: "e", Channel: "c", Data: "d"})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v, want *HTTPError 401", err)
	}
	if he.Body == "" {
		t.Error("HTTPError.Body is empty; want the server's message")
	}
	if got := Reason(err); got != "status_401" {
		t.Errorf("Reason = %q, want status_401", got)
	}
}

func TestBaseURLForms(t *testing.T) {
	t.Parallel()
	c, rec := setup(t)
	ws := "ws" + c.base.String()[len("http"):] + "/"
	for _, base := range []string{c.base.String(), ws} {
		cl := New(base, appID, key, secret, nil)
		if err := cl.Trigger(context.Background(), pusher.Event{Name: "e", Channel: "c", Data: base}); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
	if got := len(rec.got()); got != 2 {
		t.Errorf("received %d events, want 2", got)
	}
	if err := New("ws://[::1", appID, key, secret, nil).Trigger(context.Background(), pusher.Event{}); err == nil {
		t.Error("unparsable base URL: no error")
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	ev := pusher.Event{Name: "e", Channel: "c", Data: "d"}

	// ECONNREFUSED: a port that was just closed.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String()
	ln.Close()

	// ECONNRESET: accept, read the whole request (the client has written
	// it all, so the reset meets its read of the answer, not its write
	// of a body still on its way), reset (linger 0).
	resetURL := tcpServer(t, func(nc net.Conn) {
		if req, err := http.ReadRequest(bufio.NewReader(nc)); err == nil {
			io.Copy(io.Discard, req.Body)
		}
		nc.(*net.TCPConn).SetLinger(0)
		nc.Close()
	})
	// timeout: never answer.
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	stallURL := tcpServer(t, func(nc net.Conn) { <-stall; nc.Close() })
	// 429 with a body.
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	t.Cleanup(limited.Close)

	tests := []struct {
		name, base string
		timeout    time.Duration
		want       string
	}{
		{"refused", refused, time.Second, "ECONNREFUSED"},
		{"reset", resetURL, 5 * time.Second, "ECONNRESET"},
		{"timeout", stallURL, 200 * time.Millisecond, "timeout"},
		{"429", limited.URL, 5 * time.Second, "status_429"},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
		err := New(tt.base, appID, key, secret, nil).Trigger(ctx, ev)
		cancel()
		if got := Reason(err); got != tt.want {
			t.Errorf("%s: Reason(%v) = %q, want %q", tt.name, err, got, tt.want)
		}
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("boom"), "other"},
		{context.Canceled, "canceled"},
		{&HTTPError{Status: 503}, "status_503"},
	} {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func tcpServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(nc)
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestBodyBuildingAllocatesNothing(t *testing.T) {
	ev := pusher.Event{Name: "tick", Channel: "ch-0", Data: `{"ts":123}`}
	buf := appendEvent(nil, &ev)
	if n := testing.AllocsPerRun(1000, func() { buf = appendEvent(buf[:0], &ev) }); n != 0 {
		t.Errorf("appendEvent into a reused buffer: %v allocations, want 0", n)
	}
}
