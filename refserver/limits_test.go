package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/gorilla/websocket"
)

// A text message that is not UTF-8 fails the connection with 1007 (RFC
// 6455 8.1) and is not echoed; binary messages are not checked; a
// character split across frames of one message is fine.
func TestEchoInvalidUTF8Closes1007(t *testing.T) {
	ts := start(t, Config{})
	for _, tt := range []struct {
		name string
		msg  []byte
	}{
		{"short", []byte("ok \xff")},
		{"truncated character at the end", []byte("ok \xe2\x82")},
		{"surrogate", []byte("\xed\xa0\x80")},
		// Longer than gorilla's 4 KiB write buffer: the invalid byte comes
		// after a part of the message that may already have been sent.
		{"long, bad at the end", append(bytes.Repeat([]byte("x"), 70000), 0xc3, 'x')},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ts.dial(t, "/echo")
			if err := c.WriteMessage(websocket.TextMessage, tt.msg); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, data, err := c.ReadMessage()
			var ce *websocket.CloseError
			if err == nil {
				t.Fatalf("echoed %d bytes, want close 1007", len(data))
			}
			if !errors.As(err, &ce) || ce.Code != websocket.CloseInvalidFramePayloadData {
				t.Fatalf("read: %v, want close 1007", err)
			}
		})
	}
	if st := ts.health(t); st.InvalidUTF8Closes != 4 {
		t.Errorf("invalid_utf8_closes = %d, want 4", st.InvalidUTF8Closes)
	}

	c := ts.dial(t, "/echo")
	// Valid: "€" split across two frames of one text message.
	w, err := c.NextWriter(websocket.TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	euro := []byte("price \xe2\x82\xac 1")
	w.Write(euro[:7])
	if f, ok := w.(interface{ Flush() error }); ok {
		f.Flush()
	}
	w.Write(euro[7:])
	w.Close()
	if err := c.WriteMessage(websocket.BinaryMessage, []byte{0xff, 0xfe}); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{euro, {0xff, 0xfe}} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, got, err := c.ReadMessage()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("echo %q, %v; want %q", got, err, want)
		}
	}
}

func TestPusherInvalidUTF8Closes1007(t *testing.T) {
	ts := start(t, Config{})
	c, _ := ts.connect(t)
	if err := c.WriteMessage(websocket.TextMessage, []byte("{\"event\":\"pusher:ping\",\"data\":\"\xff\"}")); err != nil {
		t.Fatal(err)
	}
	if code := closeCode(t, c); code != websocket.CloseInvalidFramePayloadData {
		t.Errorf("close %d, want 1007", code)
	}
}

// utf8Stream agrees with utf8.Valid however the bytes are split.
func TestUTF8StreamAnySplit(t *testing.T) {
	samples := []string{"", "plain", "price \xe2\x82\xac", "\xf0\x9f\x98\x80 emoji", "\xc3\xa9t\xc3\xa9",
		"\xff", "a\xe2\x82", "\xe2\x82a", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98",
		"\x80", "ok\xe2\x82\xac\xe2\x82", strings.Repeat("\xe2\x82\xac", 50)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = []byte{'a', 0x80, 0xbf, 0xc2, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xff, 0xed, 0xa0}[r.IntN(12)]
		}
		samples = append(samples, string(b))
	}
	for _, s := range samples {
		want := utf8.ValidString(s)
		for split := 0; split <= len(s); split++ {
			for split2 := split; split2 <= len(s); split2++ {
				var u utf8Stream
				ok := u.feed([]byte(s[:split])) && u.feed([]byte(s[split:split2])) && u.feed([]byte(s[split2:])) && u.done()
				if ok != want {
					t.Fatalf("%q split at %d,%d: %v, want %v", s, split, split2, ok, want)
				}
			}
		}
	}
}

// A socket may hold --max-subscriptions channels; one more gets
// pusher:error code 4300 and the socket stays open and usable.
func TestSubscriptionLimit(t *testing.T) {
	ts := start(t, Config{MaxSubscriptions: 3})
	c, _ := ts.connect(t)
	for _, ch := range []string{"a", "b", "c"} {
		subscribe(t, c, ch)
	}
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, "d", false)); err != nil {
		t.Fatal(err)
	}
	m := readMsg(t, c)
	var d pusher.ErrorData
	if m.Event != pusher.EventError || json.Unmarshal(m.Data, &d) != nil || d.Code == nil || *d.Code != pusher.CodeSubscriptionLimit ||
		!strings.Contains(d.Message, "--max-subscriptions") {
		t.Fatalf("got %s %s, want pusher:error code %d", m.Event, m.Data, pusher.CodeSubscriptionLimit)
	}
	if st := ts.health(t); st.Subscriptions != 3 {
		t.Errorf("subscriptions = %d, want 3", st.Subscriptions)
	}
	// Subscribing again to a channel it has is no new subscription.
	subscribe(t, c, "b")
	// After an unsubscribe there is room again.
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, "a", true)); err != nil {
		t.Fatal(err)
	}
	subscribe(t, c, "d")
	if status, body := ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x", Channel: "d", Data: "1"}), "app-secret"); status != 200 {
		t.Fatalf("publish: %d %s", status, body)
	}
	if m := readMsg(t, c); m.Event != "x" || m.Channel != "d" {
		t.Errorf("got %s on %s, want x on d", m.Event, m.Channel)
	}
}

// A forged request is refused before its body is read, and one announced
// larger than --max-body-bytes before anything else is checked.
func TestRESTRefusesBeforeReading(t *testing.T) {
	ts := start(t, Config{MaxBodyBytes: 1 << 20})
	url := "http://" + ts.addr + "/apps/app-id/events"
	for _, tt := range []struct {
		name   string
		length int64 // -1: chunked
		secret string
		want   int
	}{
		{"announced too large, bad signature", 8 << 20, "wrong", 413},
		{"announced too large, good signature", 8 << 20, "app-secret", 413},
		{"chunked, bad signature", -1, "wrong", 401},
		{"chunked, good signature, too large", -1, "app-secret", 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := int64(8 << 20)
			body := bytes.Repeat([]byte("a"), int(n))
			q := pusher.Sign("POST", "/apps/app-id/events", nil, "app-key", tt.secret, time.Now().Unix(), body)
			var r io.Reader = bytes.NewReader(body)
			if tt.length < 0 {
				r = io.MultiReader(r) // hides the length: chunked
			}
			req, err := http.NewRequest("POST", url+"?"+q.Encode(), r)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tt.length
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if st := ts.health(t); st.RESTInflightBytes != 0 {
		t.Errorf("rest_inflight_body_bytes = %d after every request ended, want 0", st.RESTInflightBytes)
	}
}

// Bodies in flight are bounded over all requests: with room for two
// bodies, two stalled uploads make a third request 503, and once they end
// there is room again.
func TestRESTInflightBudget(t *testing.T) {
	const maxBody = 64 << 10
	ts := start(t, Config{MaxBodyBytes: maxBody, MaxInflightBodyBytes: 2 * maxBody})
	url := "http://" + ts.addr + "/apps/app-id/events"
	body := append([]byte(`{"name":"x","channel":"c","data":"`), bytes.Repeat([]byte("a"), maxBody-36)...)
	body = append(body, `"}`...)
	if len(body) != maxBody {
		t.Fatalf("body is %d bytes, want %d", len(body), maxBody)
	}
	var writers []*io.PipeWriter
	done := make(chan int, 2)
	for range 2 {
		q := pusher.Sign("POST", "/apps/app-id/events", nil, "app-key", "app-secret", time.Now().Unix(), body)
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, err := http.NewRequest("POST", url+"?"+q.Encode(), pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(body))
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- -1
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		pw.Write(body[:100]) // then stall
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.health(t).RESTInflightBytes != int64(2*len(body)) {
		if time.Now().After(deadline) {
			t.Fatalf("rest_inflight_body_bytes = %d, want %d", ts.health(t).RESTInflightBytes, 2*len(body))
		}
		time.Sleep(10 * time.Millisecond)
	}
	small := mustJSON(t, pusher.Event{Name: "x", Channel: "c", Data: "1"})
	if status, msg := ts.post(t, "/apps/app-id/events", small, "app-secret"); status != http.StatusServiceUnavailable || !strings.Contains(msg, "--max-inflight-body-bytes") {
		t.Errorf("with the budget full: %d %q, want 503 naming --max-inflight-body-bytes", status, msg)
	}
	for _, pw := range writers {
		pw.Write(body[100:])
		pw.Close()
	}
	for range 2 {
		if status := <-done; status != 200 {
			t.Errorf("stalled upload finished with %d, want 200", status)
		}
	}
	if status, msg := ts.post(t, "/apps/app-id/events", small, "app-secret"); status != 200 {
		t.Errorf("after the uploads: %d %q, want 200", status, msg)
	}
	if st := ts.health(t); st.RESTBusy != 1 || st.RESTInflightBytes != 0 {
		t.Errorf("rest_busy %d, rest_inflight_body_bytes %d; want 1 and 0", st.RESTBusy, st.RESTInflightBytes)
	}
}
