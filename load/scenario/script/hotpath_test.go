package script

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

const roomsFile = "../../../benchmark/scenarios/rooms.json"

// roomsScenario builds the rooms scenario for n connections without
// connecting: the receive path needs none.
func roomsScenario(tb testing.TB, n int) *scenario {
	tb.Helper()
	spec, err := ParseFile(roomsFile)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := &load.Config{URL: "ws://127.0.0.1:1", Connections: n, Payload: "constant", RecordSize: 200}
	pool, err := payload.New("constant", 1, 200, 16)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := newScenario(cfg, pool, spec, nil)
	if err != nil {
		tb.Fatal(err)
	}
	s.w, s.ctx = everything, context.Background()
	for _, c := range s.conns {
		c.out = discard{}
	}
	return s
}

// discard is a link that sends nowhere.
type discard struct{}

func (discard) Send(wsconn.Opcode, []byte) {}
func (discard) SetTimer(int64)             {}

func opMessage(v int64, ts int64) []byte {
	data := make([]byte, 200)
	for i := range data {
		data[i] = 'x'
	}
	return []byte(`{"type":"op","room":"r0","from":"c7","v":` + strconv.FormatInt(v, 10) + `,"ts":` + strconv.FormatInt(ts, 10) + `,"data":"` + string(data) + `"}`)
}

var everything = load.Window{Open: 0, Start: 0, End: 1 << 62, Drain: 1 << 62}

// TestReceiveAllocs: matching a message and extracting its fields
// allocates nothing, for every kind of message the rooms file meets.
func TestReceiveAllocs(t *testing.T) {
	s := roomsScenario(t, 20)
	editor, viewer := s.conns[0], s.conns[5]
	if editor.role.Name != "editor" || viewer.role.Name != "viewer" {
		t.Fatalf("roles: %s %s", editor.role.Name, viewer.role.Name)
	}
	now := load.Mono()
	var v int64
	msgs := make([][]byte, 0, 1000)
	for i := range 1000 {
		msgs = append(msgs, opMessage(int64(i+1), now))
	}
	if a := testing.AllocsPerRun(500, func() {
		viewer.handle(msgs[v], now+1000)
		v++
	}); a != 0 {
		t.Errorf("op: %v allocs per message", a)
	}
	// Acks matched by id: the ids are in the table (the send path put them there).
	acks := make([][]byte, 0, 1000)
	for i := range 1000 {
		id := fmt.Sprintf("c0-%d", i)
		editor.ids[id] = idEntry{ts: now, send: 0}
		acks = append(acks, []byte(fmt.Sprintf(`{"type":"ack","id":%q,"v":%d,"ts":%d}`, id, 2000+i, now)))
	}
	var a int
	if n := testing.AllocsPerRun(500, func() {
		editor.handle(acks[a], now+1000)
		a++
	}); n != 0 {
		t.Errorf("ack: %v allocs per message", n)
	}
	editor.lastSend.Store(0) // errors without a known id count against the last send
	others := [][]byte{
		[]byte(`{"type":"presence","room":"r0","ts":` + strconv.FormatInt(now, 10) + `,"n":2,"users":[{"id":"c2","ts":1,"cursor":{"line":3}},{"id":"c3","ts":2,"cursor":null}]}`),
		[]byte(`{"type":"joined","room":"r0","role":"viewer","version":0,"members":3}`),
		[]byte(`{"type":"error","code":429,"reason":"rate_limited","id":"c0-999999"}`),
		[]byte(`{"type":"error","code":400,"reason":"bad_json"}`),
		[]byte(`{"type":"something_else"}`),
	}
	for _, m := range others {
		if n := testing.AllocsPerRun(200, func() { editor.handle(m, now+1000) }); n != 0 {
			t.Errorf("%s: %v allocs per message", m, n)
		}
	}
	s.Finish(nil, nil)
	k := s.Kinds()
	if k["op"].Received == 0 || k["ack"].Received == 0 || k["presence"].Received == 0 || k["joined"].Received == 0 {
		t.Errorf("kinds not counted: op %d ack %d presence %d joined %d", k["op"].Received, k["ack"].Received, k["presence"].Received, k["joined"].Received)
	}
	if k["ack"].ErrorsByReason["ack_unknown_id"] != 0 {
		t.Errorf("acks not matched by id: %v", k["ack"].ErrorsByReason)
	}
	if k["patch"].RateLimited == 0 || k["patch"].ErrorsByReason["server_bad_json"] == 0 || s.Unmatched() == 0 {
		t.Errorf("rate limited %d, errors %v, unmatched %d", k["patch"].RateLimited, k["patch"].ErrorsByReason, s.Unmatched())
	}
}

// BenchmarkReceive compares the receive cost per message of the scenario
// engine (match the kind, extract ts/sender/version, record) on a rooms op
// message with what the echo scenario does with a reply (check its size,
// record). ns/op and allocs/op are per message; neither includes the read.
func BenchmarkReceive(b *testing.B) {
	b.Run("echo", func(b *testing.B) {
		rec := load.NewRecorder(true, false)
		msg := make([]byte, 200)
		t0 := load.Mono()
		b.ReportAllocs()
		for b.Loop() {
			now := load.Mono()
			if len(msg) != 200 {
				b.Fatal("size")
			}
			rec.Latency.Record(now - t0)
			rec.Messages++
			rec.Bytes += int64(len(msg))
		}
	})
	b.Run("rooms_op", func(b *testing.B) {
		s := roomsScenario(b, 20)
		c := s.conns[5]
		ts := load.Mono()
		msgs := make([][]byte, 1024)
		for i := range msgs {
			msgs[i] = opMessage(int64(i+1), ts)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.handle(msgs[i&1023], load.Mono())
			i++
		}
	})
	b.Run("rooms_presence", func(b *testing.B) {
		s := roomsScenario(b, 20)
		c := s.conns[5]
		msg := []byte(`{"type":"presence","room":"r0","ts":` + strconv.FormatInt(load.Mono(), 10) + `,"n":2,"users":[{"id":"c2","ts":1,"cursor":{"line":3}},{"id":"c3","ts":2,"cursor":null}]}`)
		b.ReportAllocs()
		for b.Loop() {
			c.handle(msg, load.Mono())
		}
	})
}

func readRooms() ([]byte, error) { return os.ReadFile(roomsFile) }

// FuzzReceive: no message makes the receive path panic, whatever it
// holds where the rooms file looks.
func FuzzReceive(f *testing.F) {
	f.Add(opMessage(1, 5))
	f.Add([]byte(`{"type":"ack","id":"c0-1","v":2,"ts":3}`))
	f.Add([]byte(`{"type":"error","code":429,"id":"c0-1"}`))
	f.Add([]byte(`{"type":"presence","ts":"x","users":[]}`))
	f.Add([]byte(`{"type":"op","from":"c0","v":-1}`))
	s := roomsScenario(f, 20)
	editor := s.conns[0]
	editor.lastSend.Store(0)
	f.Fuzz(func(t *testing.T, msg []byte) {
		editor.ids["c0-1"] = idEntry{ts: 1, send: 0}
		editor.handle(msg, load.Mono())
		s.conns[5].handle(msg, load.Mono())
	})
}
