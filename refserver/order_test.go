package refserver

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// Within a channel, a batch arrives in publish order, for a subscriber of
// one channel and of two.
func TestBatchOrderWithinChannel(t *testing.T) {
	ts := start(t, Config{})
	one, _ := ts.connect(t)
	both, _ := ts.connect(t)
	subscribe(t, one, "a")
	subscribe(t, both, "a")
	subscribe(t, both, "b")
	var batch pusher.BatchEvents
	var wantA, wantB []string
	for i := range 200 {
		ch := "a"
		if i%3 == 0 {
			ch = "b"
		}
		seq := strconv.Itoa(i)
		batch.Batch = append(batch.Batch, pusher.Event{Name: "e", Channel: ch, Data: seq})
		if ch == "a" {
			wantA = append(wantA, seq)
		} else {
			wantB = append(wantB, seq)
		}
	}
	if status, body := ts.post(t, "/apps/app-id/batch_events", mustJSON(t, batch), "app-secret"); status != 200 {
		t.Fatalf("publish: %d %q", status, body)
	}
	byChannel := func(c *websocket.Conn, n int) map[string][]string {
		got := map[string][]string{}
		for range n {
			m := readMsg(t, c)
			got[m.Channel] = append(got[m.Channel], dataString(t, m))
		}
		return got
	}
	if diff := cmp.Diff(map[string][]string{"a": wantA}, byChannel(one, len(wantA))); diff != "" {
		t.Errorf("one channel (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"a": wantA, "b": wantB}, byChannel(both, 200)); diff != "" {
		t.Errorf("two channels (-want +got):\n%s", diff)
	}
}

// Publishing while sockets subscribe, unsubscribe and disconnect must not
// break anything (run with -race); afterwards the registry is empty.
func TestPublishDuringChurn(t *testing.T) {
	ts := start(t, Config{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		body := mustJSON(t, pusher.BatchEvents{Batch: []pusher.Event{
			{Name: "e", Channel: "c0", Data: "x"}, {Name: "e", Channel: "c1", Data: "y"}}})
		for {
			select {
			case <-stop:
				return
			default:
			}
			if status, msg := ts.post(t, "/apps/app-id/batch_events", body, "app-secret"); status != 200 {
				t.Errorf("publish: %d %q", status, msg)
				return
			}
		}
	}()
	deadline := time.Now().Add(time.Second)
	for i := 0; time.Now().Before(deadline) && i < 200; i++ {
		c, _ := ts.connect(t)
		ch := "c" + strconv.Itoa(i%2)
		c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, ch, false))
		if i%2 == 0 {
			c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, ch, true))
		}
		c.Close() // abrupt: no close handshake
	}
	close(stop)
	wg.Wait()
	waitFor(t, func() bool { st := ts.Stats(); return st.Connections == 0 })
	if st := ts.Stats(); st.Channels != 0 || st.Subscriptions != 0 {
		t.Errorf("after churn: channels %d, subscriptions %d; want 0, 0", st.Channels, st.Subscriptions)
	}
}
