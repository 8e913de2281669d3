package evloop

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/gorilla/websocket"
)

// Messages round-trip through a real server on several loops and
// connections; each connection sends rounds messages, one after each
// echo, then closes: Closed(nil) once each, Run ends when all have.
func TestEchoRoundTrips(t *testing.T) {
	url := server(t, 4096, echoBack)
	const conns, rounds = 7, 50
	var got, closed, bad atomic.Int64
	sent := make([]int, conns)
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) { c.Send(wsconn.OpText, []byte("hello")) }
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		if op != wsconn.OpText || string(p) != "hello" {
			bad.Add(1)
		}
		got.Add(1)
		if sent[c.Index()]++; sent[c.Index()] == rounds {
			c.Close()
			return
		}
		c.Send(wsconn.OpText, p) // p is still valid: Send frames it first
	}
	h.closed = func(c *Conn, err error) {
		if err != nil {
			t.Errorf("conn %d: %v", c.Index(), err)
		}
		closed.Add(1)
	}
	e, cs := engine(t, url, 3, conns, 10*time.Second, h)
	for i, c := range cs {
		if c.Index() != i || c.Loop() != i%3 {
			t.Fatalf("conn %d: index %d loop %d", i, c.Index(), c.Loop())
		}
		c.SetTimer(mono())
	}
	runFor(t, e, context.Background(), 10*time.Second)
	if got.Load() != conns*rounds || closed.Load() != conns || bad.Load() != 0 {
		t.Fatalf("got %d messages (%d bad), %d closed", got.Load(), bad.Load(), closed.Load())
	}
	reads, msgs := e.Counters()
	if msgs != conns*rounds || reads < msgs/2 {
		t.Fatalf("counters: %d reads %d messages", reads, msgs)
	}
	st := e.Stats()
	if len(st.Busy) != 3 || st.Lag.TotalCount() == 0 {
		t.Fatalf("stats: busy %v lag count %d", st.Busy, st.Lag.TotalCount())
	}
	for _, b := range st.Busy {
		if b < 0 || b > 1 {
			t.Fatalf("busy %v", st.Busy)
		}
	}
	snap := e.Snapshot()
	var sm, st2 int64
	for _, s := range snap {
		sm += s.Messages
		st2 += s.Timers
	}
	if sm != msgs || st2 != conns {
		t.Fatalf("snapshot %+v", snap)
	}
}

// Timers fire in due order, at or after their due time, once; a
// cancelled or replaced timer does not fire at its old time.
func TestTimers(t *testing.T) {
	url := server(t, 4096, echoBack)
	const conns = 6
	var mu sync.Mutex
	var order []int
	var early []int64
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) {
		mu.Lock()
		order = append(order, c.Index())
		if now < due {
			early = append(early, due-now)
		}
		mu.Unlock()
		c.Close()
	}
	e, cs := engine(t, url, 1, conns, 10*time.Second, h)
	base := mono() + int64(50*time.Millisecond)
	// Due in reverse order of Add: 5, 4, 3, ... 10 ms apart.
	for i, c := range cs {
		c.SetTimer(base + int64(conns-i)*int64(10*time.Millisecond))
	}
	cs[2].SetTimer(0)                                  // cancelled...
	cs[3].SetTimer(base + int64(200*time.Millisecond)) // ...and moved last
	cs[0].SetTimer(base - int64(10*time.Millisecond))  // moved first
	cs[2].SetTimer(base + int64(300*time.Millisecond)) // re-set after a cancel
	runFor(t, e, context.Background(), 5*time.Second)
	want := []int{0, 5, 4, 1, 3, 2}
	if len(early) != 0 || len(order) != len(want) {
		t.Fatalf("order %v early %v", order, early)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if st := e.Snapshot(); st[0].Timers != conns {
		t.Fatalf("timers %d", st[0].Timers)
	}
}

// Connections still open at the drain end with ErrDrain, and Run
// returns then; a cancelled context ends Run promptly with ctx's error.
func TestDrainAndCancel(t *testing.T) {
	url := server(t, 4096, echoBack)
	var drained atomic.Int64
	h := &handler{closed: func(c *Conn, err error) {
		if errors.Is(err, ErrDrain) {
			drained.Add(1)
		}
	}}
	e, _ := engine(t, url, 2, 4, 200*time.Millisecond, h)
	runFor(t, e, context.Background(), 5*time.Second)
	if early := e.cfg.Drain - mono(); early > 0 {
		t.Fatalf("Run returned %v before the drain", time.Duration(early))
	}
	if drained.Load() != 4 {
		t.Fatalf("%d drained, want 4", drained.Load())
	}

	var cancelledN atomic.Int64
	h = &handler{closed: func(c *Conn, err error) {
		if errors.Is(err, context.Canceled) {
			cancelledN.Add(1)
		}
	}}
	e, _ = engine(t, url, 2, 4, time.Hour, h)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if d := runFor(t, e, ctx, 5*time.Second); d > 2*time.Second {
		t.Fatalf("Run took %v after a cancel at 50ms", d)
	}
	if cancelledN.Load() != 4 {
		t.Fatalf("%d ended by the cancel, want 4", cancelledN.Load())
	}

	// No drain (0): Run waits for the cancel.
	cancelledN.Store(0)
	cfg := Config{Now: mono, Loops: 1}
	e, _ = engineOf(t, cfg, url, 2, h)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if d := runFor(t, e, ctx, 5*time.Second); d < 80*time.Millisecond || cancelledN.Load() != 2 {
		t.Fatalf("Run returned after %v with %d cancelled, want at the cancel with 2", d, cancelledN.Load())
	}
}

// Frames split across reads (a header in pieces, a payload in pieces),
// a frame larger than the shared read buffer, a fragmented message with
// a ping inside it, and frames that came with the handshake all arrive
// whole; the ping is answered.
func TestPartialBigAndFragmented(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (readBufferSize+100_000)/16)
	pongs := make(chan string, 1)
	url := server(t, 1024, func(c *websocket.Conn) {
		c.SetPongHandler(func(s string) error { pongs <- s; return nil })
		go func() { // read so the pong handler runs
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		nc := c.NetConn()
		_ = c.WriteMessage(websocket.TextMessage, []byte("first")) // likely read with the 101
		// A 300-byte frame (16-bit length) in three pieces: inside the header, inside the payload.
		p := bytes.Repeat([]byte("x"), 300)
		frame := append([]byte{0x82, 126, 1, 44}, p...)
		for _, part := range [][]byte{frame[:3], frame[3:100], frame[100:]} {
			if _, err := nc.Write(part); err != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = c.WriteMessage(websocket.BinaryMessage, big)
		// Fragmented: NextWriter flushes a frame per full 1 KiB buffer;
		// a ping goes between fragments.
		w, err := c.NextWriter(websocket.TextMessage)
		if err != nil {
			return
		}
		_, _ = w.Write(bytes.Repeat([]byte("f"), 3000))
		_ = c.WriteControl(websocket.PingMessage, []byte("p1"), time.Now().Add(time.Second))
		_, _ = w.Write(bytes.Repeat([]byte("g"), 3000))
		_ = w.Close()
		_ = c.WriteMessage(websocket.TextMessage, []byte("last"))
		time.Sleep(time.Second)
	})
	var got []string
	h := &handler{}
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		switch {
		case len(p) == len(big):
			if !bytes.Equal(p, big) {
				t.Error("big frame corrupted")
			}
			got = append(got, "big")
		case len(p) == 6000:
			if string(p) != strings.Repeat("f", 3000)+strings.Repeat("g", 3000) || op != wsconn.OpText {
				t.Errorf("fragmented message corrupted (op %v)", op)
			}
			got = append(got, "frag")
		case len(p) == 300:
			if op != wsconn.OpBinary || string(p) != strings.Repeat("x", 300) {
				t.Error("split frame corrupted")
			}
			got = append(got, "split")
		default:
			got = append(got, string(p))
		}
		if string(p) == "last" {
			c.Close()
		}
	}
	e, _ := engine(t, url, 1, 1, 10*time.Second, h)
	runFor(t, e, context.Background(), 10*time.Second)
	if strings.Join(got, ",") != "first,split,big,frag,last" {
		t.Fatalf("got %v", got)
	}
	select {
	case p := <-pongs:
		if p != "p1" {
			t.Fatalf("pong %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no pong")
	}
}

// With a tiny send buffer and a server that reads slowly, sends the
// socket refuses are queued and written on EPOLLOUT, in order.
func TestPartialWrites(t *testing.T) {
	const msgs, size = 200, 20000
	var recv atomic.Int64
	var outOfOrder atomic.Bool
	url := server(t, 64<<10, func(c *websocket.Conn) {
		for i := 0; ; i++ {
			_, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if len(p) != size || p[0] != byte(i) {
				outOfOrder.Store(true)
			}
			if recv.Add(1) == msgs {
				_ = c.WriteMessage(websocket.TextMessage, []byte("done"))
			}
			if i%20 == 0 {
				time.Sleep(2 * time.Millisecond)
			}
		}
	})
	var maxPending int
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) {
		p := make([]byte, size)
		for i := range msgs {
			p[0] = byte(i)
			c.Send(wsconn.OpBinary, p)
			maxPending = max(maxPending, c.Pending())
		}
	}
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		if string(p) == "done" {
			c.Close()
		}
	}
	e, cs := engine(t, url, 1, 1, 20*time.Second, h)
	if err := setSndBuf(cs[0], 4096); err != nil {
		t.Fatal(err)
	}
	cs[0].SetTimer(mono())
	runFor(t, e, context.Background(), 20*time.Second)
	if recv.Load() != msgs || outOfOrder.Load() {
		t.Fatalf("server got %d of %d (out of order: %v)", recv.Load(), msgs, outOfOrder.Load())
	}
	if maxPending == 0 {
		t.Fatal("the socket took everything at once: the test did not exercise the queue")
	}
}

// A server's close frame ends the connection with its code and is
// answered.
func TestServerClose(t *testing.T) {
	answered := make(chan int, 1)
	url := server(t, 4096, func(c *websocket.Conn) {
		_ = c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye"))
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			answered <- ce.Code
		}
	})
	var got error
	e, _ := engine(t, url, 1, 1, 5*time.Second, &handler{closed: func(c *Conn, err error) { got = err }})
	runFor(t, e, context.Background(), 5*time.Second)
	var ce *wsconn.CloseError
	if !errors.As(got, &ce) || ce.Code != 4001 {
		t.Fatalf("Closed got %v", got)
	}
	select {
	case code := <-answered:
		if code != 4001 {
			t.Fatalf("answered with %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close not answered")
	}
}

// No goroutine per connection: 500 connections on 2 loops add about 2
// goroutines while Run runs.
func TestNoGoroutinePerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("500 connections")
	}
	url := server(t, 1024, echoBack)
	const conns = 500
	var during atomic.Int64
	var done atomic.Int64
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) {
		if c.Index() == 0 {
			during.Store(int64(runtime.NumGoroutine()))
		}
		c.Send(wsconn.OpText, []byte("x"))
	}
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		done.Add(1)
		c.Close()
	}
	e, cs := engine(t, url, 2, conns, 30*time.Second, h)
	before := runtime.NumGoroutine()
	for _, c := range cs {
		c.SetTimer(mono())
	}
	runFor(t, e, context.Background(), 30*time.Second)
	if done.Load() != conns {
		t.Fatalf("%d of %d echoed", done.Load(), conns)
	}
	// Run adds its loops; the server's goroutines were there before.
	if extra := during.Load() - int64(before); extra > 10 {
		t.Fatalf("%d goroutines more while running %d connections", extra, conns)
	}
}

// The hot paths allocate nothing per message: a timer send, the write,
// the read, the parse and the dispatch, against a real echo server.
func TestZeroAllocsPerMessage(t *testing.T) {
	url := server(t, 64<<10, rawEcho)
	const rounds = 2000
	payload := bytes.Repeat([]byte("a"), 200)
	var n int
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) {
		b := c.Scratch()
		for range 10 {
			b = c.AppendFrame(b, wsconn.OpText, payload)
		}
		c.SendFrames(b)
		c.SetLowWater(10 * (2 + len(payload) + 2)) // 16-bit length header
	}
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		if n++; n%10 == 0 {
			if n == rounds*10 {
				c.Close()
				return
			}
			c.SetTimer(now) // next batch from the timer path
		}
	}
	// Warm up (free lists, heap, histogram), then measure a whole run's
	// allocations per message.
	for _, measure := range []bool{false, true} {
		n = 0
		e, cs := engine(t, url, 1, 1, 30*time.Second, h)
		cs[0].SetTimer(mono())
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		runFor(t, e, context.Background(), 30*time.Second)
		runtime.ReadMemStats(&b)
		if n != rounds*10 {
			t.Fatalf("%d messages", n)
		}
		if !measure {
			continue
		}
		// What a run costs once (its goroutines, the events slice) is
		// far below one allocation per message (20,000 here).
		per := float64(b.Mallocs-a.Mallocs) / float64(n)
		t.Logf("%d allocations for %d messages", b.Mallocs-a.Mallocs, n)
		if per > 0.01 {
			t.Fatalf("%.3f allocations per message", per)
		}
	}
}

// Busy fractions tell a loop that never waited from one that only
// waited, over the window only; lag is recorded inside the window only.
func TestBusyFractionAndLagWindow(t *testing.T) {
	url := server(t, 4096, echoBack)
	const window = 300 * time.Millisecond
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) {
		if c.Loop() == 0 { // loop 0 spins: never waits
			for mono() < now+int64(5*time.Millisecond) {
			}
			c.SetTimer(mono())
		}
	}
	e, cs := engineOf(t, Config{Now: mono, Loops: 2}, url, 2, h)
	// The window starts once the connections are open, whatever dialing
	// took (before Run, nothing else reads the engine's Config).
	start := mono() + int64(50*time.Millisecond)
	e.cfg.Window.Start, e.cfg.Window.End = start, start+int64(window)
	e.cfg.Drain = e.cfg.Window.End + int64(50*time.Millisecond)
	for _, c := range cs {
		c.SetTimer(mono())
	}
	runFor(t, e, context.Background(), 5*time.Second)
	st := e.Stats()
	if st.WindowNs != int64(window) || len(st.Busy) != 2 {
		t.Fatalf("stats %+v", st)
	}
	if st.Busy[0] < 0.9 || st.Busy[1] > 0.5 || st.MaxBusy() != st.Busy[0] {
		t.Fatalf("busy %v: want loop 0 near 1 (it spun), loop 1 near 0 (it waited)", st.Busy)
	}
	// Loop 0's timers ran about 5 ms apart, each due when set: only those
	// inside the window were recorded.
	if n := st.Lag.TotalCount(); n < 10 || n > int64(window/(5*time.Millisecond))+2 {
		t.Fatalf("%d lags recorded for a %v window of 5 ms timers", n, window)
	}
}

// A busy-polling loop (Config.BusyPoll) never parks, yet delivers every
// message, fires timers, ends its connections at the drain, and returns
// on a cancel.
func TestBusyPoll(t *testing.T) {
	url := server(t, 4096, echoBack)
	const conns, rounds = 3, 20
	var got atomic.Int64
	sent := make([]int, conns)
	h := &handler{}
	h.timer = func(c *Conn, due, now int64) { c.Send(wsconn.OpText, []byte("hello")) }
	h.message = func(c *Conn, op wsconn.Opcode, p []byte, now int64) {
		got.Add(1)
		if sent[c.Index()]++; sent[c.Index()] == rounds {
			c.Close()
			return
		}
		c.Send(wsconn.OpText, p)
	}
	h.closed = func(c *Conn, err error) {
		if err != nil {
			t.Errorf("conn %d: %v", c.Index(), err)
		}
	}
	cfg := Config{Now: mono, Loops: 1, BusyPoll: true, Drain: mono() + int64(10*time.Second)}
	e, cs := engineOf(t, cfg, url, conns, h)
	for _, c := range cs {
		c.SetTimer(mono() + int64(time.Millisecond))
	}
	runFor(t, e, context.Background(), 10*time.Second)
	if got.Load() != conns*rounds {
		t.Fatalf("busy poll: %d messages, want %d", got.Load(), conns*rounds)
	}

	var drained atomic.Int64
	h = &handler{closed: func(c *Conn, err error) {
		if errors.Is(err, ErrDrain) {
			drained.Add(1)
		}
	}}
	cfg.Drain = mono() + int64(200*time.Millisecond)
	e, _ = engineOf(t, cfg, url, 2, h)
	runFor(t, e, context.Background(), 5*time.Second)
	if drained.Load() != 2 {
		t.Fatalf("busy poll: %d ended at the drain, want 2", drained.Load())
	}

	var cancelled atomic.Int64
	h = &handler{closed: func(c *Conn, err error) {
		if errors.Is(err, context.Canceled) {
			cancelled.Add(1)
		}
	}}
	cfg.Drain = 0
	e, _ = engineOf(t, cfg, url, 2, h)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	runFor(t, e, ctx, 5*time.Second)
	if cancelled.Load() != 2 {
		t.Fatalf("busy poll: %d ended by the cancel, want 2", cancelled.Load())
	}
}
