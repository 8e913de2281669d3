package refserver

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// Shutdown closes every socket, echo and Pusher alike, with 1012.
func TestShutdownCloses1012(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	ts := &testServer{Server: srv, addr: l.Addr().String()}

	echo := ts.dial(t, "/echo")
	app, _ := ts.connect(t)
	subscribe(t, app, "c")
	// Make sure the echo socket is registered before shutting down.
	echo.WriteMessage(websocket.TextMessage, []byte("hi"))
	if _, _, err := echo.ReadMessage(); err != nil {
		t.Fatal(err)
	}

	type result struct{ echo, app int }
	got := make(chan result, 1)
	go func() {
		var r result
		for _, x := range []struct {
			c    *websocket.Conn
			code *int
		}{{echo, &r.echo}, {app, &r.app}} {
			x.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				_, _, err := x.c.ReadMessage()
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					*x.code = ce.Code
					break
				}
				if err != nil {
					break
				}
			}
		}
		got <- r
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve: %v, want ErrServerClosed", err)
	}
	want := result{websocket.CloseServiceRestart, websocket.CloseServiceRestart}
	if diff := cmp.Diff(want, <-got, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("close codes (-want +got):\n%s", diff)
	}
	if st := srv.Stats(); st.Connections != 0 {
		t.Errorf("connections after Shutdown = %d, want 0", st.Connections)
	}
}

// /health counters move with traffic.
func TestHealthCounters(t *testing.T) {
	ts := start(t, Config{})
	before := ts.health(t)
	if before.CPUSeconds <= 0 || before.RSSBytes == 0 || before.Goroutines == 0 {
		t.Errorf("process figures missing: %+v", before)
	}
	e := ts.dial(t, "/echo")
	for range 3 {
		e.WriteMessage(websocket.BinaryMessage, []byte("x"))
		if _, _, err := e.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := ts.connect(t)
	b, _ := ts.connect(t)
	subscribe(t, a, "one")
	subscribe(t, b, "one")
	subscribe(t, b, "two")
	ts.post(t, "/apps/app-id/batch_events", mustJSON(t, pusher.BatchEvents{Batch: []pusher.Event{
		{Name: "x", Channel: "one", Data: "1"}, {Name: "y", Channel: "two", Data: "2"}}}), "app-secret")
	readMsg(t, a)
	readMsg(t, b)
	readMsg(t, b)

	st := ts.health(t)
	got := struct {
		Connections                            int64
		Channels, Subscriptions                int
		MessagesIn, EventsPublished, Delivered uint64
		RESTRequests                           uint64
	}{st.Connections, st.Channels, st.Subscriptions, st.MessagesIn - before.MessagesIn,
		st.EventsPublished, st.Deliveries, st.RESTRequests}
	want := got
	want.Connections, want.Channels, want.Subscriptions = 3, 2, 3
	want.MessagesIn = 3 + 3 // echoes + subscribes
	want.EventsPublished, want.Delivered, want.RESTRequests = 2, 3, 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	// Out: 3 echoes, 2 connection_established, 3 subscription_succeeded, 3 events.
	if out := st.MessagesOut - before.MessagesOut; out != 11 {
		t.Errorf("messages_out moved by %d, want 11", out)
	}
}

// A subscriber that stops reading is closed with 4100 once its queue is
// full, and the publisher is never blocked by it.
func TestSlowConsumerClosed(t *testing.T) {
	ts := start(t, Config{SendQueue: 64, WriteTimeout: 2 * time.Second})
	slow, _ := ts.connect(t)
	subscribe(t, slow, "c")
	fast, _ := ts.connect(t)
	subscribe(t, fast, "c")

	// Drain the fast one as we go, until the "done" event; never read the
	// slow one until the end.
	fastGot := make(chan int, 1)
	go func() {
		n := 0
		for {
			fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, data, err := fast.ReadMessage()
			if err != nil || strings.Contains(string(data), `"done"`) {
				fastGot <- n
				return
			}
			n++
		}
	}()
	data := string(make([]byte, 8192))
	events := make([]pusher.Event, 100)
	for i := range events {
		events[i] = pusher.Event{Name: "x", Channel: "c", Data: data}
	}
	body := mustJSON(t, pusher.BatchEvents{Batch: events})
	deadline := time.Now().Add(5 * time.Second)
	for ts.health(t).SlowConsumerCloses == 0 {
		if time.Now().After(deadline) {
			t.Fatal("slow consumer never closed")
		}
		if status, msg := ts.post(t, "/apps/app-id/batch_events", body, "app-secret"); status != 200 {
			t.Fatalf("publish: %d %q", status, msg)
		}
	}
	ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "done", Channel: "c"}), "app-secret")
	if got := closeCode(t, slow); got != pusher.CodeOverCapacity {
		t.Errorf("slow consumer close code %d, want %d", got, pusher.CodeOverCapacity)
	}
	if n := <-fastGot; n < 100 {
		t.Errorf("fast subscriber got %d events, want at least 100", n)
	}
	if st := ts.health(t); st.DroppedMessages == 0 {
		t.Errorf("dropped_messages = 0 after a slow-consumer close")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	_, err := New(Config{MaxBatch: -1, SendQueue: -2})
	if err == nil {
		t.Fatal("New accepted negative sizes")
	}
	for _, want := range []string{"MaxBatch", "SendQueue"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
