package script

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// A connection's load-phase logic, in the shape of an event-loop handler:
// message (a data message arrived), timer (the connection's one timer came
// due) and closed (the connection ended). The engines (loop.go, one epoll
// loop per core; goroutines.go, a reader and a writer per connection) only
// call these; nothing here blocks on the network except an HTTP send, which
// only the goroutine engine runs.
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

func (c *conn) resetCache() {
	for i := range c.cache {
		c.cache[i].looked = false
	}
}

// lookup returns the value at path index p of the current message, looking
// each path up at most once per message.
func (c *conn) lookup(msg []byte, p int) ([]byte, bool) {
	e := &c.cache[p]
	if !e.looked {
		e.val, e.ok = jsonscan.Lookup(msg, c.s.spec.paths[p])
		e.looked = true
	}
	return e.val, e.ok
}

func (c *conn) match(m *matcher, msg []byte) bool {
	if m.empty {
		return isEmptyObject(msg)
	}
	for i := range m.fields {
		f := &m.fields[i]
		v, ok := c.lookup(msg, f.path)
		if !ok || !jsonscan.ValueEqual(v, f.want) {
			return false
		}
	}
	return true
}

// answerFor renders the automatic answer to msg into c.answer (reused), or
// returns nil.
func (c *conn) answerFor(msg []byte) []byte {
	if i := c.answerIndex(msg); i >= 0 {
		return c.renderAnswer(i, load.Mono())
	}
	return nil
}

// answerIndex is the first automatic answer whose match msg meets, or -1.
func (c *conn) answerIndex(msg []byte) int {
	for i := range c.s.spec.Connect.Answers {
		if c.match(&c.s.spec.Connect.Answers[i].Match, msg) {
			return i
		}
	}
	return -1
}

// renderAnswer renders automatic answer i at now into c.answer (reused).
func (c *conn) renderAnswer(i int, now int64) []byte {
	c.rvs.ints[varTsNs] = now
	c.rvs.strs[varPayload] = c.s.pool.Value(c.i)
	c.answer = c.s.spec.Connect.Answers[i].Reply.Append(c.answer[:0], &c.rvs)
	return c.answer
}

// classify finds what msg is: an automatic answer's match (its index in
// ans), rate limited, a server error, a receive kind, or nothing.
const (
	clsNone = iota
	clsAnswer
	clsRateLimited
	clsError
	clsKind
)

func (c *conn) classify(msg []byte) (cls int, r *recvSpec, ans int) {
	c.resetCache()
	spec := c.s.spec
	if i := c.answerIndex(msg); i >= 0 {
		return clsAnswer, nil, i
	}
	if rl := spec.RateLimited; rl != nil && rl.Match != nil && c.match(rl.Match, msg) {
		return clsRateLimited, nil, -1
	}
	if e := spec.Errors; e != nil && c.match(&e.Match, msg) {
		return clsError, nil, -1
	}
	for _, r := range spec.Receives {
		if c.match(&r.Match, msg) {
			return clsKind, r, -1
		}
	}
	return clsNone, nil, -1
}

// handle accounts one received message.
func (c *conn) handle(msg []byte, now int64) {
	w := c.s.w
	cls, r, ans := c.classify(msg)
	switch cls {
	case clsAnswer:
		c.reply(c.renderAnswer(ans, now), now)
	case clsRateLimited:
		c.rateLimited(msg, now)
	case clsError:
		c.serverError(msg, now)
	case clsKind:
		c.receive(r, msg, now)
	default:
		if w.In(now) {
			c.sh.lock()
			c.sh.unmatched++
			c.sh.unlock()
		}
	}
}

// countError counts reason against kind k (-1: the connection's last send)
// and in the recorder.
func (c *conn) countError(k int, reason string, in bool) {
	if !in {
		return
	}
	if k < 0 {
		if j := c.lastSend.Load(); j >= 0 {
			k = c.role.Sends[j].kind
		}
	}
	c.sh.lock()
	if k >= 0 {
		c.sh.kinds[k].error(reason)
	}
	c.sh.rec.Error(reason)
	c.sh.unlock()
}

// takeID removes the send awaiting an ack with the id at path, if any.
func (c *conn) takeID(msg []byte, path []string) (idEntry, bool) {
	v, _ := jsonscan.Lookup(msg, path)
	return c.takeRawID(v)
}

// takeRawID removes the send awaiting an ack with the raw id v, if any.
func (c *conn) takeRawID(v []byte) (idEntry, bool) {
	if v == nil {
		return idEntry{}, false
	}
	if len(v) >= 2 && v[0] == '"' {
		v = v[1 : len(v)-1]
	}
	c.lockIDs()
	k := idKey(v)
	e, ok := c.ids[k]
	if ok {
		delete(c.ids, k)
	}
	c.unlockIDs()
	return e, ok
}

func (c *conn) rateLimited(msg []byte, now int64) {
	w := c.s.w
	rl := c.s.spec.RateLimited
	send, in := int(c.lastSend.Load()), w.In(now)
	if rl.ID != nil {
		if e, ok := c.takeID(msg, rl.ID); ok {
			send, in = e.send, w.In(e.ts)
		}
	}
	if !in || send < 0 {
		return
	}
	c.sh.lock()
	c.sh.kinds[c.role.Sends[send].kind].rateLimited++
	c.sh.rec.Error("rate_limited")
	c.sh.unlock()
}

func (c *conn) serverError(msg []byte, now int64) {
	if !c.s.w.In(now) {
		return
	}
	var v []byte
	if p := c.s.spec.Errors.Reason; p != nil {
		v, _ = jsonscan.Lookup(msg, p)
	}
	sh := c.sh
	sh.lock()
	r, ok := sh.reasons[string(v)] // no allocation once a reason is known
	if !ok {
		r = "server_error"
		if v != nil {
			r = "server_" + boundedReason(v)
		}
		if len(sh.reasons) < 64 {
			sh.reasons[string(v)] = r
		}
	}
	sh.unlock()
	c.countError(-1, r, true)
}

// boundedReason keeps a server's reason usable as a key: short, quoted
// strings of [A-Za-z0-9_-] or a number; anything else is "other".
func boundedReason(v []byte) string {
	if len(v) >= 2 && v[0] == '"' {
		v = v[1 : len(v)-1]
	}
	if len(v) == 0 || len(v) > 32 {
		return "other"
	}
	for _, ch := range v {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return "other"
		}
	}
	return string(v)
}

// Field slots of a receive kind's extraction.
const (
	fTS = iota
	fSender
	fVersion
	fID
	numFields
)

// extract reads r's named fields from msg into c.fields: in one pass
// when they are all top-level keys (the usual case), else one lookup each.
func (c *conn) extract(r *recvSpec, msg []byte) {
	if r.top != nil {
		jsonscan.LookupTop(msg, r.top, c.top[:len(r.top)])
		for f := range numFields {
			c.fields[f] = nil
			if k := r.topIdx[f]; k >= 0 {
				c.fields[f] = c.top[k]
			}
		}
		return
	}
	for f, p := range [numFields][]string{r.TS, r.Sender, r.Version, r.ID} {
		c.fields[f] = nil
		if p != nil {
			c.fields[f], _ = jsonscan.Lookup(msg, p)
		}
	}
}

// receive accounts a message of receive kind r.
func (c *conn) receive(r *recvSpec, msg []byte, now int64) {
	w := c.s.w
	c.extract(r, msg)
	var ts int64
	hasTS := false
	if r.TS != nil {
		if v := c.fields[fTS]; v != nil {
			ts, hasTS = jsonscan.ParseInt(v)
		}
		if !hasTS && r.Type == "relay" {
			c.countError(r.kind, "no_ts", w.In(now))
			return
		}
	}
	if r.Sender != nil {
		if v := c.fields[fSender]; v != nil && jsonscan.ValueEqual(v, c.clientQ) {
			if w.In(now) {
				c.sh.lock()
				c.sh.kinds[r.kind].own++
				c.sh.unlock()
			}
			return
		}
	}
	var gaps int64
	if r.Version != nil {
		if v := c.fields[fVersion]; v != nil {
			if n, ok := jsonscan.ParseInt(v); ok {
				if c.hasVersion && n > c.version+1 {
					gaps = n - c.version - 1
				}
				if c.hasVersion && n <= c.version {
					c.countError(r.kind, "version_not_increasing", now >= w.Start && now < w.Drain)
				}
				c.version, c.hasVersion = n, true
			}
		}
	}
	if r.Type == "ack" && r.ID != nil {
		e, ok := c.takeRawID(c.fields[fID])
		if !hasTS {
			if !ok {
				c.countError(r.kind, "ack_unknown_id", w.In(now))
				return
			}
			ts, hasTS = e.ts, true
		}
	}
	if !hasTS && r.Type != "ignore" {
		c.countError(r.kind, "no_ts", w.In(now))
		return
	}
	c.record(r, len(msg), ts, gaps, now)
	if r.Type == "ack" && c.role.Closed {
		c.release(now)
	}
}

// record accounts a relay, ack or ignored message of kind r that carries
// ts (its send's timestamp) and reveals gaps missing versions.
func (c *conn) record(r *recvSpec, size int, ts, gaps, now int64) {
	w := c.s.w
	sh := c.sh
	sh.lock()
	defer sh.unlock()
	k := &sh.kinds[r.kind]
	if gaps > 0 && now >= w.Start && now < w.Drain {
		k.gaps += gaps
	}
	if r.Type == "ignore" {
		if w.In(now) {
			k.received++
			sh.rec.Messages++
			sh.rec.Bytes += int64(size)
		}
		return
	}
	if !w.In(ts) {
		return
	}
	if now >= w.Drain {
		k.late++
		return
	}
	lat := now - ts
	k.received++
	k.hist.Record(lat)
	sh.rec.Latency.Record(lat)
	sh.rec.Messages++
	sh.rec.Bytes += int64(size)
}
