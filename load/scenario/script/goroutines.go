package script

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// The goroutine engine: each connection has a reader goroutine (message,
// closed) and a writer goroutine (timer, and every write: wsconn allows one
// writer). It carries the connections the loops cannot: HTTP senders
// (their requests block), a WebSocket role that makes HTTP sends, and every
// connection with --io goroutines (where epoll is not available).

// goRun is a connection's link on the goroutine engine. Its methods run
// on the writer goroutine only.
type goRun struct {
	c       *conn
	replies chan []byte   // reader -> writer: automatic answers
	await   chan struct{} // reader -> writer: a closed-loop ack arrived
	dead    chan struct{} // reader stopped
	at      int64         // the timer (SetTimer)
	timer   *time.Timer
	frame   []byte
}

func (g *goRun) SetTimer(at int64) { g.at = at }

func (g *goRun) Send(op wsconn.Opcode, p []byte) {
	c := g.c
	if c.writeErr != nil {
		return
	}
	g.frame = c.ws.AppendFrame(g.frame[:0], op, p)
	if err := c.ws.Write(g.frame); err != nil {
		c.writeErr, c.broken = err, true
	}
}

// reply hands an automatic answer to the writer (a copy: a is reused), or
// writes it at once on a loop.
func (c *conn) reply(a []byte, now int64) {
	if c.g == nil {
		c.out.Send(wsconn.OpText, a)
		return
	}
	select {
	case c.g.replies <- bytes.Clone(a):
	default:
		c.countError(-1, "answer_dropped", c.s.w.In(now))
	}
}

// release is a closed-loop ack: handled at once on a loop, handed to the
// writer on the goroutine engine.
func (c *conn) release(now int64) {
	if c.g == nil {
		c.released(now)
		return
	}
	select {
	case c.g.await <- struct{}{}:
	default:
	}
}

// goStart runs c on the goroutine engine until the drain (or done).
func (c *conn) goStart(ctx context.Context, done <-chan struct{}, wg *sync.WaitGroup) {
	g := &goRun{c: c, replies: make(chan []byte, 16), await: make(chan struct{}, 1)}
	c.g, c.out = g, g
	if c.ws != nil { // else g.dead stays nil: the writer runs to the drain
		g.dead = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.goRead(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.goWrite(done)
	}()
}

// goRead is the connection's reader: every message is matched and its
// named fields extracted by scanning (no unmarshal), until the drain.
func (c *conn) goRead(ctx context.Context) {
	defer close(c.g.dead)
	ws := c.ws
	stop := context.AfterFunc(ctx, func() {
		ws.SetReadDeadline(time.Unix(1, 0))
		ws.SetWriteDeadline(time.Unix(1, 0))
	})
	defer stop()
	ws.SetReadDeadline(load.MonoTime(c.s.w.Drain))
	c.handshakeRest()
	for {
		_, msg, err := ws.ReadMessage()
		now := load.Mono() // every message of a frame arrived with it
		if err != nil {
			c.closed(err, now)
			return
		}
		c.message(msg, now)
	}
}

// handshakeRest handles the messages left in the handshake's last frame
// (connect.split "newline") as the first of the load.
func (c *conn) handshakeRest() {
	if len(c.pending) > 0 {
		p := bytes.Clone(c.pending)
		c.pending = nil
		c.message(p, load.Mono())
	}
}

// goWrite is the connection's writer: the handler's timer (sends on their
// schedule, closed-loop sends and await timeouts), the reader's answers
// and closed-loop releases, until the drain.
func (c *conn) goWrite(done <-chan struct{}) {
	g := c.g
	g.timer = time.NewTimer(time.Hour)
	g.timer.Stop()
	defer g.timer.Stop()
	c.start(load.Mono())
	for !c.broken {
		at, drain := g.at, false
		if at <= 0 {
			at, drain = c.s.w.Drain, true // keep answering until the drain
		}
		var fire <-chan time.Time
		if d := at - load.Mono(); d > 0 {
			g.timer.Reset(time.Duration(d))
			fire = g.timer.C
		} else {
			select {
			case <-done:
				return
			case <-g.dead:
				return
			default:
			}
			fire = closedTime
		}
		select {
		case <-fire:
			if drain {
				return
			}
			g.at = 0
			c.timer(at, load.Mono())
		case a := <-g.replies:
			g.Send(wsconn.OpText, a)
		case <-g.await:
			c.released(load.Mono())
		case <-done:
			return
		case <-g.dead:
			return
		}
		g.timer.Stop()
	}
}

// closedTime is a channel that is always ready: a timer already due.
var closedTime = func() chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()
