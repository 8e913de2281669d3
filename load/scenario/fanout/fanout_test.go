package fanout

import (
	"testing"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/pusher"
)

// A delivery is scanned, not unmarshalled: accounting one costs no
// allocation, and its latency is now - ceiling_ts.
func TestFanoutDeliverScansWithoutAllocating(t *testing.T) {
	cfg := load.DefaultConfig()
	cfg.Scenario = Name
	p := &Params{AppID: DefaultAppID, Key: DefaultKey, Secret: DefaultSecret, Channels: 1, Publishers: 1}
	pool, _ := payload.New(payload.JSON, 1, 256, 4)
	f := newFanout(&cfg, p, pool)
	w := load.Window{Start: 1000, End: 2000, Drain: 3000}
	msg := func(ts int64) []byte {
		data := appendEventData(nil, ts, 7, pool.Value(0), payload.JSON)
		return pusher.AppendEvent(nil, fanoutEvent, "ceiling-0", string(data))
	}
	in, before := msg(1500), msg(500)
	rec := load.NewRecorder(true, false)
	tl := f.newTally()
	f.deliver(in, 1600, w, rec, tl, 0)
	f.deliver(before, 1600, w, rec, tl, 0)                                     // published in the warm-up: not counted
	f.deliver(in, 3100, w, rec, tl, 0)                                         // after the grace: late
	f.deliver([]byte(`{"event":"pusher:pong","data":"{}"}`), 1, w, rec, tl, 0) // not ours
	if !f.deliver([]byte(`{"event":"pusher:ping","data":"{}"}`), 1, w, rec, tl, 0) {
		t.Error("a pusher:ping was not reported for a pong")
	}
	if rec.Messages != 1 || rec.Late != 1 || rec.Latency.Latency().Max != 100 || rec.TotalErrors() != 0 {
		t.Fatalf("messages %d late %d latency %+v errors %v", rec.Messages, rec.Late, rec.Latency.Latency(), rec.Errors)
	}
	if tl.delivered[0][0] != 1 {
		t.Fatalf("server 0 tally %v, want 1 delivery before any split", tl.delivered)
	}
	if a := testing.AllocsPerRun(1000, func() { f.deliver(in, 1600, w, rec, tl, 0) }); a != 0 {
		t.Fatalf("%v allocations per delivery", a)
	}
}

func TestAppendEventData(t *testing.T) {
	got := string(appendEventData(nil, 123, 4, []byte("xx"), payload.Constant))
	if want := `{"ceiling_ts":123,"ceiling_seq":4,"payload":"xx"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
