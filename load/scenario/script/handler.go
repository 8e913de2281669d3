package script

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// A connection's load-phase logic, in the shape of an event-loop handler:
// message (a data message arrived), timer (the connection's one timer came
// due) and closed (the connection ended). The engines (loop.go, one epoll
// loop per core; goroutines.go, a reader and a writer per connection) only
// call these; nothing here blocks on the network except an HTTP send, which
// only the goroutine engine runs. What message does with a message is in
// receive.go.
//
// On the loop engine every call for the connections of one loop comes
// from that loop's goroutine, so the shard (one per loop) and the
// connection's state are touched without locks. On the goroutine engine
// message runs on the reader and timer on the writer: the reader never
// touches the writer's state (it hands answers and closed-loop releases
// over), and shards and the id table take their locks (shard.lock, a no-op
// on a loop's shard).

// link is what the handler needs of its connection's engine: an
// evloop.Conn on the loop engine, the writer goroutine's on the other.
type link interface {
	// Send frames p and writes it; it never blocks (what the socket does
	// not take is queued).
	Send(op wsconn.Opcode, p []byte)
	// SetTimer arms the connection's one timer at at (Mono); at <= 0
	// cancels it.
	SetTimer(at int64)
}

// message handles one data message received at now: every message of it
// with connect.split "newline", one per non-blank line.
func (c *conn) message(p []byte, now int64) {
	if !c.s.spec.Connect.SplitLines {
		c.handle(p, now)
		return
	}
	for len(p) > 0 {
		var part []byte
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			part, p = p[:i], p[i+1:]
		} else {
			part, p = p, nil
		}
		if len(bytes.TrimSpace(part)) > 0 {
			c.handle(part, now)
		}
	}
}

// timer runs what the connection's timer was set for: open loop, every
// send due by now (stamped with its scheduled time); closed loop, the
// first send, or the next one after an await that timed out.
func (c *conn) timer(due, now int64) {
	if !c.role.Closed {
		c.openSends(now)
		return
	}
	if c.awaiting {
		c.awaiting = false
		c.countError(c.role.Sends[c.awaitSend].kind, "await_timeout", c.s.w.In(c.sentAt))
	}
	c.closedSend(now)
}

// closed counts the error that ended the connection at now (nil: the
// generator closed it; the drain's own deadline is not an error either).
func (c *conn) closed(err error, now int64) {
	if err != nil && c.s.ctx.Err() == nil {
		c.readError(err, now)
	}
}

// start arms the connection's timer when Load begins: at its first
// open-loop send's scheduled time, or now for a closed loop.
func (c *conn) start(now int64) {
	if len(c.role.Sends) == 0 {
		return
	}
	if c.role.Closed {
		c.out.SetTimer(now)
		return
	}
	if _, due := c.nextDue(); due < c.s.w.End {
		c.out.SetTimer(due)
	}
}

// maxBurst bounds the sends of one timer call: a connection far behind its
// schedule hands the loop back to the others between bursts.
const maxBurst = 64

// nextDue is the open loop's next send and its scheduled time: each send
// on its own schedule, the connections' phases spread over one interval.
func (c *conn) nextDue() (j int, due int64) {
	due = 1 << 62
	for x, sd := range c.role.Sends {
		iv := 1e9 / sd.Rate
		if d := c.s.w.Open + int64(c.phase(iv)+float64(c.k[x])*iv); d < due {
			j, due = x, d
		}
	}
	return j, due
}

// saturatedLag is how far behind its schedule a send may go before the
// run is marked saturated: far beyond a scheduling hiccup, so it means
// the generator (or a blocking HTTP send) could not keep up.
const saturatedLag = int64(time.Second)

// phase spreads connections' schedules over one interval (golden-ratio
// sequence, so any n connections are evenly spread).
func (c *conn) phase(interval float64) float64 {
	f := float64(c.i) * 0.6180339887498949
	return (f - float64(int64(f))) * interval
}

// openSends sends every send due by now, each stamped with its scheduled
// time and its lateness recorded as schedule lag, then arms the timer for
// the next one. Sends stop at the window's end.
func (c *conn) openSends(now int64) {
	w := c.s.w
	sends := c.role.Sends
	for n := 0; ; n++ {
		j, due := c.nextDue()
		switch {
		case due >= w.End:
			return
		case due > now:
			c.out.SetTimer(due)
			return
		case n == maxBurst:
			c.out.SetTimer(now)
			return
		}
		c.k[j]++
		ok := c.send(j, due)
		if w.In(due) {
			lag := now - due
			sh := c.sh
			sh.lock()
			sh.rec.Lag.Record(lag)
			if float64(lag) > 1e9/sends[j].Rate {
				sh.rec.LateSends++
			}
			if lag > saturatedLag && sh.rec.SaturatedReason == "" {
				sh.rec.SaturatedReason = fmt.Sprintf("connection %d sent %s %v behind its schedule: the generator could not keep the file's rates", c.i, sends[j].Name, time.Duration(lag).Round(time.Millisecond))
			}
			if ok {
				sh.rec.OK++
			}
			sh.unlock()
		}
		if c.broken {
			return // the connection is broken; the reader reports why
		}
		now = load.Mono()
	}
}

// closedSend sends the role's next send (they take turns) stamped now and
// awaits its ack until the send's timeout; none at or after the window's
// end.
func (c *conn) closedSend(now int64) {
	sends := c.role.Sends
	for now < c.s.w.End {
		j := c.turn % len(sends)
		c.turn++
		if !c.send(j, now) {
			if c.broken {
				return
			}
			now = load.Mono()
			continue // an HTTP send that failed: the next one at once
		}
		c.awaiting, c.awaitSend, c.sentAt = true, j, now
		c.out.SetTimer(now + int64(sends[j].AwaitTimeout))
		return
	}
	c.out.SetTimer(0)
}

// released is a closed-loop ack arriving at now: the send it answers
// succeeded, and the next goes at once.
func (c *conn) released(now int64) {
	if !c.awaiting {
		return // a late ack of a send that timed out
	}
	c.awaiting = false
	if c.s.w.In(c.sentAt) {
		c.sh.lock()
		c.sh.rec.OK++
		c.sh.unlock()
	}
	c.closedSend(now)
}

// send renders and sends send j stamped ts (the scheduled time in the open
// loop, the send time in the closed loop) and accounts it when ts is in the
// window. It reports whether the write succeeded.
func (c *conn) send(j int, ts int64) bool {
	w := c.s.w
	sd := c.role.Sends[j]
	c.seq[j]++
	vs := &c.vs
	vs.ints[varSeq] = c.seq[j]
	vs.ints[varTsNs] = ts
	c.fill(vs)
	if sd.ID != nil {
		c.id = sd.ID.Append(c.id[:0], vs)
		vs.strs[varID] = c.id
		if len(sd.ackKinds) > 0 || (c.s.spec.RateLimited != nil && c.s.spec.RateLimited.ID != nil) {
			c.lockIDs()
			if c.ids == nil {
				c.ids = map[uint64]idEntry{}
			}
			if len(c.ids) >= maxIDs {
				clear(c.ids) // ids never answered (refused without an id, lost)
			}
			c.ids[idKey(c.id)] = idEntry{ts: ts, send: j}
			c.unlockIDs()
		}
	}
	c.body = sd.Message.Append(c.body[:0], vs)
	c.lastSend.Store(int32(j))
	var err error
	var rtt int64
	if sd.HTTP != nil {
		start := load.Mono()
		err = c.post(sd)
		rtt = load.Mono() - start
	} else {
		c.out.Send(wsconn.OpText, c.body)
		err = c.writeErr // the goroutine engine's; a loop reports a broken connection in closed
	}
	if !w.In(ts) {
		return err == nil
	}
	sh := c.sh
	sh.lock()
	defer sh.unlock()
	k := &sh.kinds[sd.kind]
	k.sent++
	sh.rec.Ops++
	if err != nil {
		r := httpReason(err)
		if r == "status_429" {
			k.rateLimited++
			sh.rec.Error("rate_limited")
		} else {
			k.error(r)
			sh.rec.Error(r)
		}
		return false
	}
	if sd.HTTP != nil && sh.kinds[sd.kind].hist != nil && c.s.spec.kinds[sd.kind].recv == nil {
		k.hist.Record(rtt)
	}
	for _, rk := range sd.relayKinds {
		if rk != sd.kind {
			sh.kinds[rk].sent++
		}
		sh.kinds[rk].expected += c.others
	}
	for _, ak := range sd.ackKinds {
		if ak != sd.kind {
			sh.kinds[ak].sent++
		}
		sh.kinds[ak].expected++
	}
	return true
}

// readError counts the error that ended the connection's reads: in the
// run's errors whenever it happened before the drain ended (a connection
// lost in the warm-up is lost too), against the last send's kind inside
// the window, and as dropped before the window's end. The drain's own
// deadline is not an error.
func (c *conn) readError(err error, now int64) {
	w := c.s.w
	if now >= w.Drain {
		return // the drain ended
	}
	r := load.Reason(err)
	var ce *wsconn.CloseError
	limited := false
	if rl := c.s.spec.RateLimited; rl != nil && errors.As(err, &ce) {
		for _, code := range rl.CloseCodes {
			limited = limited || code == ce.Code
		}
	}
	sh := c.sh
	sh.lock()
	defer sh.unlock()
	if j := c.lastSend.Load(); j >= 0 && now >= w.Start {
		k := &sh.kinds[c.role.Sends[j].kind]
		if limited {
			k.rateLimited++
		} else {
			k.error(r)
		}
	}
	if limited {
		sh.rec.Error("rate_limited")
	} else {
		sh.rec.Error(r)
	}
	if now < w.End {
		sh.rec.Dropped++
	}
}
