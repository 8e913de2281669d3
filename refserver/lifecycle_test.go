package refserver

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// Shutdown closes every socket, echo and Pusher alike, with 1012.
func TestShutdownCloses1012(t *testing.T) {
	baseline := runtime.NumGoroutine()
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
	// Every reader, writer and server goroutine is gone.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Shutdown, %d before New:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
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
	// A frame is counted after its write returns, which can be after the
	// client has read it: wait (bounded) for the writers to catch up.
	out := st.MessagesOut - before.MessagesOut
	for deadline := time.Now().Add(5 * time.Second); out < 11 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		out = ts.health(t).MessagesOut - before.MessagesOut
	}
	if out != 11 {
		t.Errorf("messages_out moved by %d, want 11", out)
	}
}

// A subscriber that stops reading is closed with 4100 once its queue is
// full, and the publisher is never blocked by it.
func TestSlowConsumerClosed(t *testing.T) {
	// The write timeout is out of the way: a blocked write that timed out
	// would end the socket without the close frame this test reads.
	ts := start(t, Config{SendQueue: 300, MaxBatch: 100, WriteTimeout: time.Minute})
	// A small receive buffer so the kernel does not absorb megabytes
	// first (much smaller makes the transfer crawl once it reads).
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	slow, resp, err := d.Dial("ws://"+ts.addr+"/app/app-key?protocol=7", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { slow.Close() })
	if m := readMsg(t, slow); m.Event != pusher.EventConnectionEstablished {
		t.Fatalf("got %q", m.Event)
	}
	subscribe(t, slow, "c")
	fast, _ := ts.connect(t)
	subscribe(t, fast, "c")

	// The fast one reads everything; each batch is published only once it
	// has the previous one, so it never falls behind. The slow one is not
	// read until the end.
	fastGot := make(chan struct{}, 1000)
	go func() {
		for {
			fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := fast.ReadMessage(); err != nil {
				close(fastGot)
				return
			}
			fastGot <- struct{}{}
		}
	}()
	const perBatch = 100
	events := make([]pusher.Event, perBatch)
	for i := range events {
		events[i] = pusher.Event{Name: "x", Channel: "c", Data: strings.Repeat("a", 8192)}
	}
	body := mustJSON(t, pusher.BatchEvents{Batch: events})
	deadline := time.Now().Add(20 * time.Second)
	batches := 0
	for ts.health(t).SlowConsumerCloses == 0 {
		if time.Now().After(deadline) {
			t.Fatal("slow consumer never closed")
		}
		if status, msg := ts.post(t, "/apps/app-id/batch_events", body, "app-secret"); status != 200 {
			t.Fatalf("publish: %d %q", status, msg)
		}
		batches++
		for range perBatch {
			if _, ok := <-fastGot; !ok {
				t.Fatalf("fast subscriber lost after %d batches", batches)
			}
		}
	}
	if got := closeCode(t, slow); got != pusher.CodeOverCapacity {
		t.Errorf("slow consumer close code %d, want %d", got, pusher.CodeOverCapacity)
	}
	// The fast one is still subscribed and served.
	ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "after", Channel: "c"}), "app-secret")
	if _, ok := <-fastGot; !ok {
		t.Error("fast subscriber lost after the slow one was closed")
	}
	if st := ts.health(t); st.SlowConsumerCloses != 1 {
		t.Errorf("slow_consumer_closes = %d, want 1", st.SlowConsumerCloses)
	}
	if st := ts.health(t); st.DroppedMessages == 0 {
		t.Errorf("dropped_messages = 0 after a slow-consumer close")
	}
}

// The rooms send queue defaults to the larger of 4096 and a full resume.
func TestRoomsSendQueueDefault(t *testing.T) {
	for _, tt := range []struct{ ring, want int }{{0, DefaultRoomsSendQueue}, {10, DefaultRoomsSendQueue}, {5000, 5001}} {
		srv, err := New(Config{RoomsRing: tt.ring})
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.Config().RoomsSendQueue; got != tt.want {
			t.Errorf("RoomsRing %d: RoomsSendQueue %d, want %d", tt.ring, got, tt.want)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string
	}{
		{Config{MaxBatch: -1, SendQueue: -2}, []string{"MaxBatch", "SendQueue"}},
		{Config{SendQueue: 10}, []string{"SendQueue: 10 is less than MaxBatch 1000"}},
		{Config{ActivityTimeout: time.Millisecond}, []string{"ActivityTimeout"}},
		{Config{RoomsEditorCap: -1, RoomsRing: -1, RoomsSkipEvery: -1, RoomsRateLimit: -1, RoomsSendQueue: -1, RoomsPresenceBeat: -time.Second},
			[]string{"RoomsEditorCap", "RoomsRing", "RoomsSkipEvery", "RoomsRateLimit", "RoomsSendQueue", "RoomsPresenceBeat"}},
		{Config{RoomsRing: 10, RoomsSendQueue: 10}, []string{"RoomsSendQueue: 10 is not more than RoomsRing 10"}},
		{Config{RoomsSendQueue: 1000}, []string{"RoomsSendQueue: 1000 is not more than RoomsRing 1000"}},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil {
			t.Errorf("New(%+v) accepted it", tt.cfg)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	}
}
