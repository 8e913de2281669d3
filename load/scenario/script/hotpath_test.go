package script

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	s := newTestScenario(tb, spec, "ws://127.0.0.1:1", n)
	s.w, s.ctx = everything, context.Background()
	for _, c := range s.conns {
		c.out, c.sh = discard{}, s.goShard(c)
		c.ids = map[uint64]idEntry{}
	}
	return s
}

// newTestScenario builds spec's driver for n connections to url, with
// constant 200-byte payloads.
func newTestScenario(tb testing.TB, spec *Spec, url string, n int) *scenario {
	tb.Helper()
	cfg := &load.Config{URL: url, Connections: n, Payload: "constant", RecordSize: 200}
	pool, err := payload.New("constant", 1, 200, 16)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := newScenario(cfg, pool, spec, nil)
	if err != nil {
		tb.Fatal(err)
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
		editor.ids[idKey([]byte(id))] = idEntry{ts: now, send: 0}
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

// TestSendAllocs: an editor's send (rendered, its id remembered, framed
// and accounted) and the ack that answers it allocate nothing either, once
// the buffers have grown.
func TestSendAllocs(t *testing.T) {
	s := roomsScenario(t, 20)
	editor := s.conns[0]
	if editor.role.Sends[0].Name != "patch" {
		t.Fatalf("send 0 is %s", editor.role.Sends[0].Name)
	}
	now := load.Mono()
	acks := make([][]byte, 0, 2000)
	for i := range 2000 {
		acks = append(acks, []byte(fmt.Sprintf(`{"type":"ack","id":"c0-%d","v":%d,"ts":%d}`, i+1, i+1, now)))
	}
	n := 0
	round := func() {
		editor.send(0, now)
		editor.handle(acks[n], now+1000)
		n++
	}
	for range 10 {
		round()
	}
	if a := testing.AllocsPerRun(1500, round); a != 0 {
		t.Errorf("%v allocs per send and its ack", a)
	}
	s.Finish(nil, nil)
	if k := s.Kinds()["ack"]; k.Received != int64(n) || len(k.ErrorsByReason) != 0 || len(editor.ids) != 0 {
		t.Errorf("acks %d of %d, errors %v, %d ids left", k.Received, n, k.ErrorsByReason, len(editor.ids))
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
		editor.ids[idKey([]byte("c0-1"))] = idEntry{ts: 1, send: 0}
		editor.handle(msg, load.Mono())
		s.conns[5].handle(msg, load.Mono())
	})
}

// TestLoopReceiveAllocs: on the event loops, receiving a message costs no
// allocation either, from the socket to the statistics: reads, frame
// parsing, matching, extracting, recording, an automatic answer written
// back, and the viewer's own open-loop sends on its timer. The server is a
// raw loopback socket that writes prepared frames (it allocates nothing
// itself).
func TestLoopReceiveAllocs(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loops here (Linux only)")
	}
	b, err := readRooms()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Replace(string(b), `"timeout_ms": 10000,`, `"timeout_ms": 10000, "answers": [{"match": {"type": "ping"}, "reply": {"type": "pong"}}],`, 1)
	spec, err := Parse([]byte(f))
	if err != nil {
		t.Fatal(err)
	}
	srv := startRawServer(t)
	s := newTestScenario(t, spec, "ws://"+srv.addr, 1)
	s.io = IOLoop
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Connect(ctx, 0); err != nil {
		t.Fatal(err)
	}
	conn := <-srv.conns
	defer conn.Close()
	open := load.Mono()
	w := load.Window{Open: open, Start: open, End: open + int64(20*time.Second), Drain: open + int64(21*time.Second)}
	loadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Load(loadCtx, w)
	}()
	defer func() { stop(); <-done }()
	// One batch: an op relay, a presence relay, a ping (answered), a
	// joined; each op with the next version.
	const batches = 600
	ts := strconv.FormatInt(load.Mono(), 10)
	frames := make([][]byte, batches)
	for i := range frames {
		for _, m := range []string{
			string(opMessage(int64(i+1), load.Mono())),
			`{"type":"presence","room":"r0","ts":` + ts + `,"n":2,"users":[{"id":"c2","ts":1,"cursor":{"line":3}}]}`,
			`{"type":"ping","k":` + strconv.Itoa(i) + `}`,
			`{"type":"joined","room":"r0","role":"viewer","version":0,"members":3}`,
		} {
			frames[i] = appendServerFrame(frames[i], []byte(m))
		}
	}
	var sent int64
	batch := 0
	step := func() {
		if _, err := conn.Write(frames[batch]); err != nil {
			t.Fatal(err)
		}
		batch++
		sent += 4
		for deadline := time.Now().Add(5 * time.Second); ; {
			if _, m := s.loops.Counters(); m >= sent {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the loop handled fewer than %d messages", sent)
			}
			time.Sleep(20 * time.Microsecond) // idle: the runtime polls the network (AllocsPerRun runs on one P)
		}
	}
	for range 50 { // warm up: buffers grow to their size
		step()
	}
	if a := testing.AllocsPerRun(batches-60, step); a != 0 {
		t.Errorf("%v allocations per batch of 4 messages on the loop", a)
	}
	if srv.pongs.Load() == 0 {
		t.Error("no ping was answered")
	}
	stop()
	<-done
	s.Finish(nil, nil)
	k := s.Kinds()
	if k["op"].Received < batches-20 || k["presence"].Received < batches-20 || k["joined"].Received < batches-20 {
		t.Errorf("received op %d, presence %d, joined %d of %d", k["op"].Received, k["presence"].Received, k["joined"].Received, batch)
	}
	if k["op"].Gaps != 0 || len(k["op"].ErrorsByReason) != 0 || s.Unmatched() != 0 {
		t.Errorf("op gaps %d, errors %v, unmatched %d", k["op"].Gaps, k["op"].ErrorsByReason, s.Unmatched())
	}
}

// rawServer accepts WebSocket connections on loopback with no library:
// the upgrade, one message awaited (the join) and answered with joined,
// then everything the client sends is read and its pongs counted.
type rawServer struct {
	addr  string
	conns chan net.Conn
	pongs atomic.Int64
}

func startRawServer(t *testing.T) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	rs := &rawServer{addr: ln.Addr().String(), conns: make(chan net.Conn, 1)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			c.Close()
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
		if _, err := readClientFrame(br, nil); err != nil {
			c.Close()
			return
		}
		c.Write(appendServerFrame(nil, []byte(`{"type":"joined","room":"r0","role":"viewer","version":0,"members":1}`)))
		rs.conns <- c
		var buf []byte
		for {
			p, err := readClientFrame(br, buf)
			buf = p
			if err != nil {
				return
			}
			if bytes.Contains(p, []byte(`"pong"`)) {
				rs.pongs.Add(1)
			}
		}
	}()
	return rs
}

// readClientFrame reads one masked client frame into buf (grown if need
// be) and returns its payload. It allocates nothing once buf is large
// enough (the header is read byte by byte: a local array handed to
// io.ReadFull would escape).
func readClientFrame(br *bufio.Reader, buf []byte) ([]byte, error) {
	var hdr [14]byte
	need := 2
	for i := 0; i < need; i++ {
		b, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		hdr[i] = b
		if i == 1 {
			switch need += 4; b & 0x7f {
			case 126:
				need += 2
			case 127:
				need += 8
			}
		}
	}
	n := int(hdr[1] & 0x7f)
	switch n {
	case 126:
		n = int(binary.BigEndian.Uint16(hdr[2:]))
	case 127:
		n = int(binary.BigEndian.Uint64(hdr[2:]))
	}
	mask := hdr[need-4 : need]
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	p := buf[:n]
	if _, err := io.ReadFull(br, p); err != nil {
		return nil, err
	}
	for i := range p {
		p[i] ^= mask[i&3]
	}
	return p, nil
}

// appendServerFrame appends p as one unmasked text frame.
func appendServerFrame(dst, p []byte) []byte {
	switch {
	case len(p) < 126:
		dst = append(dst, 0x81, byte(len(p)))
	case len(p) < 1<<16:
		dst = append(dst, 0x81, 126, byte(len(p)>>8), byte(len(p)))
	default:
		panic("frame too large for the test")
	}
	return append(dst, p...)
}
