package script

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
	"github.com/ceiling-bench/ceiling/load"
)

// The receive side of a connection's handler (handler.go): a message is
// classified (automatic answers, rate-limited, server errors, then the
// receive kinds), its fields are read by internal/jsonscan, at most one
// lookup per path, and it is recorded against its kind.

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
		e.val, e.ok = lookup(msg, c.s.spec.paths[p])
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

// jsonString marks a field path's element whose value is a JSON string
// holding a document of its own, which the rest of the path reads:
// Pusher's "data@json.ts" is the ts inside the string at data.
const jsonString = "@json"

// lookup is jsonscan.Lookup, but for a path through a JSON string
// (jsonString): that string is decoded and the rest of the path looked up
// in it. Only such a path allocates.
func lookup(doc []byte, path []string) ([]byte, bool) {
	for i, p := range path {
		key, ok := strings.CutSuffix(p, jsonString)
		if !ok {
			continue
		}
		v, ok := jsonscan.Lookup(doc, append(path[:i:i], key))
		if !ok || len(v) == 0 || v[0] != '"' {
			return nil, false
		}
		var inner string
		if json.Unmarshal(v, &inner) != nil {
			return nil, false
		}
		return lookup([]byte(inner), path[i+1:])
	}
	return jsonscan.Lookup(doc, path)
}

// matchDoc is match for a document outside a connection's message cache
// (an HTTP response body).
func (s *Spec) matchDoc(m *matcher, doc []byte) bool {
	if m.empty {
		return isEmptyObject(doc)
	}
	for i := range m.fields {
		f := &m.fields[i]
		v, ok := lookup(doc, s.paths[f.path])
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
	v, _ := lookup(msg, path)
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
		v, _ = lookup(msg, p)
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
			c.fields[f], _ = lookup(msg, p)
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
	// A gap counts where the message that reveals it counts: by its
	// send's timestamp, so that the talker's ack and each listener's
	// relay of one send fall on the same side of the window's edges; an
	// ignored message, which may carry none, by its arrival.
	if gaps > 0 && now < w.Drain && (r.Type == "ignore" && now >= w.Start || r.Type != "ignore" && w.In(ts)) {
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

// isEmptyObject reports whether msg is {} with only whitespace around and
// inside it.
func isEmptyObject(msg []byte) bool {
	t := bytes.TrimSpace(msg)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return false
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}
