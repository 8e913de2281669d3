package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/gorilla/websocket"
)

// BenchmarkFanout publishes events straight into the hub (no HTTP) to
// subscribers whose clients discard bytes at the TCP level, so the figures
// are mostly the server's: encode once per channel, queue to each
// subscriber, writev per wake-up. One op is one event; deliveries/s
// counts frames written.
func BenchmarkFanout(b *testing.B) {
	for _, subs := range []int{1, 100} {
		b.Run("subscribers="+strconv.Itoa(subs), func(b *testing.B) {
			ts := start(b, Config{})
			for range subs {
				c := ts.dialTB(b, "/app/app-key?protocol=7")
				c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, "bench", false))
				nc := c.NetConn()
				go io.Copy(io.Discard, nc)
			}
			// Every connection_established and subscription_succeeded written.
			waitFor(b, func() bool { return ts.stats.messagesOut.Load() == uint64(2*subs) })
			base := ts.stats.messagesOut.Load()
			evs := []rawEvent{{name: "tick", nameLit: []byte(`"tick"`), channel: "bench",
				dataLit: []byte(`"{\"id\":12345,\"ts\":1700000000000,\"pad\":\"aaaaaaaaaaaaaaaa\"}"`)}}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			// Pace in chunks so the queues never overflow (that would be
			// a slow-consumer close, not throughput).
			for i := range b.N {
				ts.publish(evs)
				if i%1000 == 999 {
					sent := base + uint64((i+1-1000)*subs)
					waitFor(b, func() bool { return ts.stats.messagesOut.Load() >= sent })
				}
			}
			want := base + uint64(b.N*subs)
			waitFor(b, func() bool { return ts.stats.messagesOut.Load() >= want })
			el := time.Since(start)
			b.ReportMetric(float64(b.N*subs)/el.Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkEcho: one gorilla client pipelines 100 64-byte messages, then
// reads the 100 echoes. One op is one message round trip. Client and
// server share the process, so this is a regression guard, not the
// efficiency report (that is make bench).
func BenchmarkEcho(b *testing.B) {
	ts := start(b, Config{})
	c := ts.dialTB(b, "/echo")
	msg := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(100, b.N-done)
		for range n {
			if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			if _, r, err := c.NextReader(); err != nil {
				b.Fatal(err)
			} else {
				io.Copy(io.Discard, r)
			}
		}
		done += n
	}
}

func waitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met within 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkBatchREST posts signed batch_events requests of 100 events over
// HTTP to 100 subscribers spread over 4 channels (clients discard bytes).
// One op is one request; the profile of this shows the REST path (read,
// verify, decode) beside the fan-out.
func BenchmarkBatchREST(b *testing.B) {
	const subs, channels, batch = 100, 4, 100
	ts := start(b, Config{})
	for i := range subs {
		c := ts.dialTB(b, "/app/app-key?protocol=7")
		c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, "ch-"+strconv.Itoa(i%channels), false))
		go io.Copy(io.Discard, c.NetConn())
	}
	waitFor(b, func() bool { return ts.stats.messagesOut.Load() == uint64(2*subs) })
	var be pusher.BatchEvents
	for i := range batch {
		be.Batch = append(be.Batch, pusher.Event{Name: "tick", Channel: "ch-" + strconv.Itoa(i%channels),
			Data: `{"id":12345,"ts":1700000000000,"body":"` + strings.Repeat("a", 200) + `"}`})
	}
	body, _ := json.Marshal(be)
	path := "/apps/app-id/batch_events"
	client := &http.Client{}
	base := ts.stats.messagesOut.Load()
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		q := pusher.Sign("POST", path, nil, "app-key", "app-secret", time.Now().Unix(), body)
		resp, err := client.Post("http://"+ts.addr+path+"?"+q.Encode(), "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	want := base + uint64(b.N*batch*subs/channels)
	waitFor(b, func() bool { return ts.stats.messagesOut.Load() >= want })
	b.ReportMetric(float64(b.N*batch*subs/channels)/time.Since(t0).Seconds(), "deliveries/s")
}

// BenchmarkRoomsPatch applies patches straight to a room (no client
// decode) whose members' clients discard bytes at the TCP level: version,
// encode the op once, queue it to every other member, the ack to the
// sender, keep it in the ring. One op is one patch; deliveries/s counts
// frames written (ops and acks).
func BenchmarkRoomsPatch(b *testing.B) {
	for _, members := range []int{2, 100} {
		b.Run("members="+strconv.Itoa(members), func(b *testing.B) {
			ts := start(b, Config{RoomsEditorCap: members})
			for i := range members {
				c := ts.dialTB(b, "/rooms")
				c.WriteMessage(websocket.TextMessage, []byte(`{"type":"join","room":"bench","role":"editor","id":"m`+strconv.Itoa(i)+`"}`))
				go io.Copy(io.Discard, c.NetConn())
			}
			// Every joined written.
			waitFor(b, func() bool { return ts.stats.messagesOut.Load() == uint64(members) })
			base := ts.stats.messagesOut.Load()
			r := ts.rooms.lookup("bench")
			r.mu.Lock()
			sender := r.members[0]
			r.mu.Unlock()
			id, data := []byte(`"m0-1"`), []byte(`{"op":"insert","pos":12345,"text":"aaaaaaaaaaaaaaaa"}`)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			// Paced in chunks so no queue overflows (1008, not throughput).
			for i := range b.N {
				r.patch(sender, id, 1700000000000000000, data)
				if i%1000 == 999 {
					sent := base + uint64((i+1-1000)*members)
					waitFor(b, func() bool { return ts.stats.messagesOut.Load() >= sent })
				}
			}
			want := base + uint64(b.N*members)
			waitFor(b, func() bool { return ts.stats.messagesOut.Load() >= want })
			el := time.Since(start)
			b.ReportMetric(float64(b.N*members)/el.Seconds(), "deliveries/s")
		})
	}
}
