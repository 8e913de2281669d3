package script

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// scenario drives one scenario file. Each WebSocket connection has a
// reader goroutine (matching and extracting fields, recording) and a
// writer goroutine (sends on their schedule, automatic answers handed over
// by the reader, closed-loop awaits): the writer is the connection's only
// writer, as wsconn requires. Statistics live in shards (a few per CPU),
// one histogram per kind per shard, merged in Finish.
type scenario struct {
	cfg   *load.Config
	pool  *payload.Pool
	spec  *Spec
	keys  map[string][]byte
	rooms int
	conns []*conn
	// members[r] is the number of open WebSocket connections in room r,
	// set when Load starts.
	members []int64
	shards  []*shard
	httpc   *http.Client
	baseURL string          // --url without a trailing slash ({url})
	httpURL string          // the same with http:// ({http_url})
	reqCtx  context.Context // HTTP sends: ends at the drain

	kinds     map[string]*KindSummary
	unmatched int64
}

// shard is one worker's statistics: the connections i with i mod shards
// == its index record into it under its lock (uncontended but for the
// few connections that share it).
type shard struct {
	mu        sync.Mutex
	rec       *load.Recorder
	kinds     []kindStats
	unmatched int64
	reasons   map[string]string // server error reasons seen, by raw value
}

type kindStats struct {
	sent, received, expected, gaps, rateLimited, own, late int64
	errs                                                   map[string]int64
	hist                                                   *load.Histogram
}

func (k *kindStats) error(reason string) {
	if k.errs == nil {
		k.errs = map[string]int64{}
	}
	k.errs[reason]++
}

// conn is one connection (or, for a role without a WebSocket, one HTTP
// sender).
type conn struct {
	s    *scenario
	i    int
	room int
	role *roleSpec
	ws   *wsconn.Conn
	sh   *shard

	client  []byte // the rendered client_id
	clientQ []byte // the same as a JSON string, for sender comparison
	others  int64  // members of its room other than itself

	// writer state
	vs       vars
	seq      []int64
	next     int
	body, id []byte
	frame    []byte
	timer    *time.Timer
	broken   bool // a WebSocket write failed

	replies chan []byte   // reader -> writer: automatic answers
	await   chan struct{} // reader -> writer: closed-loop reply arrived
	dead    chan struct{} // reader stopped

	mu  sync.Mutex // ids
	ids map[string]idEntry

	lastSend atomic.Int32

	// pending is the rest of the last frame when connect.split is
	// "newline": its messages still to handle (aliases the read buffer,
	// valid until the next ReadMessage, which only runs once it is empty).
	pending []byte

	// reader state
	rvs        vars
	cache      []cacheEntry
	fields     [numFields][]byte
	top        [numFields][]byte
	version    int64
	hasVersion bool
}

type idEntry struct {
	ts   int64
	send int
}

type cacheEntry struct {
	val        []byte
	ok, looked bool
}

// maxIDs bounds the per-connection table of sends awaiting an ack or a
// refusal; when it is full it starts over, forgetting ids that were never
// answered.
const maxIDs = 1 << 16

func newScenario(c *load.Config, pool *payload.Pool, spec *Spec, keys map[string][]byte) (*scenario, error) {
	roles, err := assignRoles(spec, c.Connections)
	if err != nil {
		return nil, fmt.Errorf("--connections %d: %w", c.Connections, err)
	}
	s := &scenario{
		cfg:   c,
		pool:  pool,
		spec:  spec,
		keys:  keys,
		rooms: spec.roomCount(c.Connections),
		httpc: &http.Client{Timeout: 30 * time.Second},
	}
	s.baseURL = strings.TrimRight(c.URL, "/")
	s.httpURL = s.baseURL
	if rest, ok := strings.CutPrefix(s.baseURL, "ws://"); ok {
		s.httpURL = "http://" + rest
	} else if rest, ok := strings.CutPrefix(s.baseURL, "wss://"); ok {
		s.httpURL = "https://" + rest
	}
	s.members = make([]int64, s.rooms)
	nsh := min(c.Connections, 2*runtime.GOMAXPROCS(0))
	for range max(nsh, 1) {
		sh := &shard{rec: load.NewRecorder(true, true), kinds: make([]kindStats, len(spec.kinds)), reasons: map[string]string{}}
		for k, kd := range spec.kinds {
			if kd.recv != nil && kd.typ != "ignore" || kd.typ == "send" {
				sh.kinds[k].hist = load.NewHistogram()
			}
		}
		s.shards = append(s.shards, sh)
	}
	for i := range c.Connections {
		cn := &conn{
			s:       s,
			i:       i,
			room:    i % s.rooms,
			role:    spec.Roles[roles[i]],
			sh:      s.shards[i%len(s.shards)],
			replies: make(chan []byte, 16),
			await:   make(chan struct{}, 1),
			dead:    make(chan struct{}),
			ids:     map[string]idEntry{},
			cache:   make([]cacheEntry, len(spec.paths)),
			next:    pool.Start(i, 1),
		}
		cn.seq = make([]int64, len(cn.role.Sends))
		cn.lastSend.Store(-1)
		for _, vs := range []*vars{&cn.vs, &cn.rvs} {
			vs.ints[varRoom] = int64(cn.room)
			vs.ints[varConn] = int64(i)
			vs.strs[varRole] = []byte(cn.role.Name)
			vs.strs[varURL] = []byte(s.baseURL)
			vs.strs[varHTTPURL] = []byte(s.httpURL)
		}
		cn.client = spec.ClientID.Append(nil, &cn.vs)
		cn.vs.strs[varClient] = cn.client
		cn.rvs.strs[varClient] = cn.client
		cn.clientQ = append(appendEscaped([]byte{'"'}, cn.client), '"')
		s.conns = append(s.conns, cn)
	}
	return s, nil
}

func (s *scenario) Preflight(ctx context.Context) error { return nil }

// errHandshake is a handshake step's fail match, or a message the server
// closed with.
type errHandshake struct{ msg string }

func (e errHandshake) Error() string { return "handshake failed: the server answered " + e.msg }

// Connect opens connection i and runs the handshake steps.
func (s *scenario) Connect(ctx context.Context, i int) error {
	c := s.conns[i]
	if !c.role.WebSocket {
		return nil
	}
	cs := &s.spec.Connect
	ctx, cancel := context.WithTimeout(ctx, cs.Timeout)
	defer cancel()
	hdr := http.Header{}
	for _, h := range cs.Headers {
		hdr.Set(h.name, h.value.String(&c.vs))
	}
	if cs.Subprotocol != "" {
		hdr.Set("Sec-WebSocket-Protocol", cs.Subprotocol)
	}
	ws, err := wsconn.Dial(ctx, cs.URL.String(&c.vs), wsconn.Options{
		Header: hdr,
		// Thousands of connections of small messages: 32 KiB of read
		// buffer each instead of the default 256 (a larger message is
		// reassembled in wsconn's second buffer), and sends are framed
		// into the connection's own buffer, so wsconn's is for the
		// handshake only.
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 4 << 10,
	})
	if err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	ws.SetReadDeadline(dl)
	for _, st := range cs.Handshake {
		if st.Send != nil {
			c.vs.ints[varTsNs] = load.Mono()
			c.body = st.Send.Append(c.body[:0], c.fill(&c.vs))
			if err := ws.WriteMessage(wsconn.OpText, c.body); err != nil {
				ws.Close()
				return err
			}
		}
		for st.Await != nil {
			msg, err := c.nextMessage(ws)
			if err != nil {
				ws.Close()
				return err
			}
			c.resetCache()
			if st.Fail != nil && c.match(st.Fail, msg) {
				ws.Close()
				return errHandshake{msg: truncate(msg)}
			}
			if c.match(st.Await, msg) {
				break
			}
			if a := c.answerFor(msg); a != nil {
				if err := ws.WriteMessage(wsconn.OpText, a); err != nil {
					ws.Close()
					return err
				}
			}
		}
	}
	ws.SetReadDeadline(time.Time{})
	c.ws = ws
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// fill sets the payload variable to the connection's next pool value.
func (c *conn) fill(vs *vars) *vars {
	vs.strs[varPayload] = c.s.pool.Value(c.next)
	c.next++
	return vs
}

func (s *scenario) ReadCounters() (reads, messages int64) {
	for _, c := range s.conns {
		if c.ws != nil {
			reads += c.ws.Reads()
			messages += c.ws.Messages()
		}
	}
	return reads, messages
}

// Load runs every connection's reader and writer until the window's drain.
func (s *scenario) Load(ctx context.Context, w load.Window) []*load.Recorder {
	for _, c := range s.conns {
		if c.ws != nil {
			s.members[c.room]++
		}
	}
	for _, c := range s.conns {
		c.others = s.members[c.room]
		if c.ws != nil {
			c.others--
		}
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(done) })
	defer stop()
	// Nothing outlives the drain: HTTP sends carry its deadline, and a
	// write to a server that stopped reading fails at it.
	var cancel context.CancelFunc
	s.reqCtx, cancel = context.WithDeadline(ctx, load.MonoTime(w.Drain))
	defer cancel()
	for _, c := range s.conns {
		if c.ws != nil {
			c.ws.SetWriteDeadline(load.MonoTime(w.Drain))
		}
	}
	var wg sync.WaitGroup
	for _, c := range s.conns {
		if c.ws == nil && c.role.WebSocket {
			continue // did not open
		}
		if c.ws != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.read(ctx, w)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.write(w, done)
		}()
	}
	wg.Wait()
	recs := make([]*load.Recorder, len(s.shards))
	for i, sh := range s.shards {
		recs[i] = sh.rec
	}
	return recs
}

// read is the connection's reader: every message is matched and its
// named fields extracted by scanning (no unmarshal), until the drain.
func (c *conn) read(ctx context.Context, w load.Window) {
	defer close(c.dead)
	ws := c.ws
	stop := context.AfterFunc(ctx, func() {
		ws.SetReadDeadline(time.Unix(1, 0))
		ws.SetWriteDeadline(time.Unix(1, 0))
	})
	defer stop()
	ws.SetReadDeadline(load.MonoTime(w.Drain))
	now := load.Mono()
	for {
		fresh := len(c.pending) == 0
		msg, err := c.nextMessage(ws)
		if fresh {
			now = load.Mono() // every message of a frame arrived with it
		}
		if err != nil {
			if ctx.Err() == nil {
				c.readError(err, now, w)
			}
			return
		}
		c.handle(msg, now, w)
	}
}

// nextMessage returns the next message: the next frame, or with
// connect.split "newline" the next non-blank line of the last frame (a
// server that joins queued messages into one frame, as Centrifugo and
// gorilla's chat example do).
func (c *conn) nextMessage(ws *wsconn.Conn) ([]byte, error) {
	for {
		if len(c.pending) > 0 {
			var part []byte
			if i := bytes.IndexByte(c.pending, '\n'); i >= 0 {
				part, c.pending = c.pending[:i], c.pending[i+1:]
			} else {
				part, c.pending = c.pending, nil
			}
			if len(bytes.TrimSpace(part)) == 0 {
				continue
			}
			return part, nil
		}
		_, msg, err := ws.ReadMessage()
		if err != nil || !c.s.spec.Connect.SplitLines {
			return msg, err
		}
		if len(msg) == 0 {
			continue
		}
		c.pending = msg
	}
}

// readError counts the error that ended the connection's reads: in the
// run's errors whenever it happened before the drain ended (a connection
// lost in the warm-up is lost too), against the last send's kind inside
// the window, and as dropped before the window's end. The drain's own
// deadline is not an error.
func (c *conn) readError(err error, now int64, w load.Window) {
	r := load.Reason(err)
	if r == "timeout" && now >= w.Drain {
		return // the drain ended
	}
	if now >= w.Drain {
		return
	}
	sh := c.sh
	var ce *wsconn.CloseError
	limited := false
	if rl := c.s.spec.RateLimited; rl != nil && errors.As(err, &ce) {
		for _, code := range rl.CloseCodes {
			limited = limited || code == ce.Code
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
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
		e.val, e.ok = Lookup(msg, c.s.spec.paths[p])
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
		if !ok || !ValueEqual(v, f.want) {
			return false
		}
	}
	return true
}

// answerFor renders the automatic answer to msg, or nil (a fresh slice:
// it goes to the writer).
func (c *conn) answerFor(msg []byte) []byte {
	for i := range c.s.spec.Connect.Answers {
		a := &c.s.spec.Connect.Answers[i]
		if c.match(&a.Match, msg) {
			c.rvs.ints[varTsNs] = load.Mono()
			c.rvs.strs[varPayload] = c.s.pool.Value(c.i)
			return a.Reply.Append(nil, &c.rvs)
		}
	}
	return nil
}

// classify finds what msg is: an automatic answer's match, rate limited,
// a server error, a receive kind (index), or nothing.
const (
	clsNone = iota
	clsAnswer
	clsRateLimited
	clsError
	clsKind
)

func (c *conn) classify(msg []byte) (cls int, r *recvSpec) {
	c.resetCache()
	spec := c.s.spec
	for i := range spec.Connect.Answers {
		if c.match(&spec.Connect.Answers[i].Match, msg) {
			return clsAnswer, nil
		}
	}
	if rl := spec.RateLimited; rl != nil && rl.Match != nil && c.match(rl.Match, msg) {
		return clsRateLimited, nil
	}
	if e := spec.Errors; e != nil && c.match(&e.Match, msg) {
		return clsError, nil
	}
	for _, r := range spec.Receives {
		if c.match(&r.Match, msg) {
			return clsKind, r
		}
	}
	return clsNone, nil
}

// handle accounts one received message.
func (c *conn) handle(msg []byte, now int64, w load.Window) {
	cls, r := c.classify(msg)
	switch cls {
	case clsAnswer:
		if a := c.answerFor(msg); a != nil {
			select {
			case c.replies <- a:
			default:
				c.countError(-1, "answer_dropped", w.In(now))
			}
		}
	case clsRateLimited:
		c.rateLimited(msg, now, w)
	case clsError:
		c.serverError(msg, now, w)
	case clsKind:
		c.receive(r, msg, now, w)
	default:
		if w.In(now) {
			c.sh.mu.Lock()
			c.sh.unmatched++
			c.sh.mu.Unlock()
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
	c.sh.mu.Lock()
	if k >= 0 {
		c.sh.kinds[k].error(reason)
	}
	c.sh.rec.Error(reason)
	c.sh.mu.Unlock()
}

// takeID removes the send awaiting an ack with the id at path, if any.
func (c *conn) takeID(msg []byte, path []string) (idEntry, bool) {
	v, _ := Lookup(msg, path)
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
	c.mu.Lock()
	e, ok := c.ids[string(v)]
	if ok {
		delete(c.ids, string(v))
	}
	c.mu.Unlock()
	return e, ok
}

func (c *conn) rateLimited(msg []byte, now int64, w load.Window) {
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
	c.sh.mu.Lock()
	c.sh.kinds[c.role.Sends[send].kind].rateLimited++
	c.sh.rec.Error("rate_limited")
	c.sh.mu.Unlock()
}

func (c *conn) serverError(msg []byte, now int64, w load.Window) {
	if !w.In(now) {
		return
	}
	var v []byte
	if p := c.s.spec.Errors.Reason; p != nil {
		v, _ = Lookup(msg, p)
	}
	sh := c.sh
	sh.mu.Lock()
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
	sh.mu.Unlock()
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
		LookupTop(msg, r.top, c.top[:len(r.top)])
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
			c.fields[f], _ = Lookup(msg, p)
		}
	}
}

// receive accounts a message of receive kind r.
func (c *conn) receive(r *recvSpec, msg []byte, now int64, w load.Window) {
	c.extract(r, msg)
	var ts int64
	hasTS := false
	if r.TS != nil {
		if v := c.fields[fTS]; v != nil {
			ts, hasTS = ParseInt(v)
		}
		if !hasTS && r.Type == "relay" {
			c.countError(r.kind, "no_ts", w.In(now))
			return
		}
	}
	if r.Sender != nil {
		if v := c.fields[fSender]; v != nil && ValueEqual(v, c.clientQ) {
			if w.In(now) {
				c.sh.mu.Lock()
				c.sh.kinds[r.kind].own++
				c.sh.mu.Unlock()
			}
			return
		}
	}
	var gaps int64
	if r.Version != nil {
		if v := c.fields[fVersion]; v != nil {
			if n, ok := ParseInt(v); ok {
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
	if r.Type == "ack" && c.role.Closed {
		select {
		case c.await <- struct{}{}:
		default:
		}
	}
	sh := c.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	k := &sh.kinds[r.kind]
	if gaps > 0 && now >= w.Start && now < w.Drain {
		k.gaps += gaps
	}
	switch r.Type {
	case "ignore":
		if w.In(now) {
			k.received++
			sh.rec.Messages++
			sh.rec.Bytes += int64(len(msg))
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
	sh.rec.Bytes += int64(len(msg))
}

// write is the connection's writer: its role's sends on their schedule
// (open loop) or one after another, each awaiting its ack (closed loop),
// plus the automatic answers the reader hands over, until the drain.
func (c *conn) write(w load.Window, done <-chan struct{}) {
	c.timer = time.NewTimer(time.Hour)
	c.timer.Stop()
	defer c.timer.Stop()
	if c.role.Closed {
		c.closedLoop(w, done)
	} else {
		c.openLoop(w, done)
	}
	c.waitUntil(w.Drain, done, nil) // keep answering until the drain
}

// waitUntil waits for load.Mono() >= t, writing the reader's answers
// meanwhile. It returns 1 at t, 2 when await fired, 0 when stopped.
func (c *conn) waitUntil(t int64, done <-chan struct{}, await <-chan struct{}) int {
	for {
		d := t - load.Mono()
		if d <= 0 {
			select {
			case <-done:
				return 0
			case <-c.dead:
				return 0
			default:
				return 1
			}
		}
		c.timer.Reset(time.Duration(d))
		select {
		case <-c.timer.C:
			return 1
		case a := <-c.replies:
			c.timer.Stop()
			c.frame = c.ws.AppendFrame(c.frame[:0], wsconn.OpText, a)
			if err := c.ws.Write(c.frame); err != nil {
				return 0
			}
		case <-await:
			c.timer.Stop()
			return 2
		case <-done:
			c.timer.Stop()
			return 0
		case <-c.dead:
			c.timer.Stop()
			return 0
		}
	}
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

func (c *conn) openLoop(w load.Window, done <-chan struct{}) {
	sends := c.role.Sends
	if len(sends) == 0 {
		return
	}
	intervals := make([]float64, len(sends))
	phases := make([]float64, len(sends))
	k := make([]int64, len(sends))
	for j, sd := range sends {
		intervals[j] = 1e9 / sd.Rate
		phases[j] = c.phase(intervals[j])
	}
	for {
		j, due := 0, int64(1<<62)
		for x := range sends {
			if d := w.Open + int64(phases[x]+float64(k[x])*intervals[x]); d < due {
				j, due = x, d
			}
		}
		if due >= w.End || c.waitUntil(due, done, nil) == 0 {
			return
		}
		now := load.Mono()
		k[j]++
		ok := c.send(j, due, w)
		if w.In(due) {
			lag := now - due
			c.sh.mu.Lock()
			c.sh.rec.Lag.Record(lag)
			if float64(lag) > intervals[j] {
				c.sh.rec.LateSends++
			}
			if lag > saturatedLag && c.sh.rec.SaturatedReason == "" {
				c.sh.rec.SaturatedReason = fmt.Sprintf("connection %d sent %s %v behind its schedule: the generator could not keep the file's rates", c.i, sends[j].Name, time.Duration(lag).Round(time.Millisecond))
			}
			if ok {
				c.sh.rec.OK++
			}
			c.sh.mu.Unlock()
		}
		if c.broken {
			return // the connection is broken; the reader reports why
		}
	}
}

func (c *conn) closedLoop(w load.Window, done <-chan struct{}) {
	sends := c.role.Sends
	for n := 0; ; n++ {
		j := n % len(sends)
		t := load.Mono()
		if t >= w.End {
			return
		}
		select {
		case <-c.await: // a stale reply of a send that timed out
		default:
		}
		if !c.send(j, t, w) {
			if c.broken {
				return
			}
			continue
		}
		switch c.waitUntil(t+int64(sends[j].AwaitTimeout), done, c.await) {
		case 0:
			return
		case 1:
			c.countError(sends[j].kind, "await_timeout", w.In(t))
		case 2:
			if w.In(t) {
				c.sh.mu.Lock()
				c.sh.rec.OK++
				c.sh.mu.Unlock()
			}
		}
	}
}

// send renders and sends send j stamped ts (the scheduled time in the open
// loop, the send time in the closed loop) and accounts it when ts is in the
// window. It reports whether the write succeeded.
func (c *conn) send(j int, ts int64, w load.Window) bool {
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
			c.mu.Lock()
			if len(c.ids) >= maxIDs {
				clear(c.ids) // ids never answered (refused without an id, lost)
			}
			c.ids[string(c.id)] = idEntry{ts: ts, send: j}
			c.mu.Unlock()
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
		c.frame = c.ws.AppendFrame(c.frame[:0], wsconn.OpText, c.body)
		err = c.ws.Write(c.frame)
		c.broken = err != nil
	}
	if !w.In(ts) {
		return err == nil
	}
	sh := c.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
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

type statusError struct{ code int }

func (e statusError) Error() string { return "HTTP status " + strconv.Itoa(e.code) }

func httpReason(err error) string {
	var se statusError
	if errors.As(err, &se) {
		return "status_" + strconv.Itoa(se.code)
	}
	return "send_" + load.Reason(err)
}

// post sends c.body as an HTTP send, signed when the send says so.
func (c *conn) post(sd *sendSpec) error {
	h := sd.HTTP
	req, err := http.NewRequestWithContext(c.s.reqCtx, h.Method, h.URL.String(&c.vs), bytes.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, hd := range h.Headers {
		req.Header.Set(hd.name, hd.value.String(&c.vs))
	}
	if sg := h.Sign; sg != nil {
		req.Header.Set(sg.Header, sign(sg, c.s.keys[sg.KeyEnv], c.body))
	}
	resp, err := c.s.httpc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError{resp.StatusCode}
	}
	return nil
}

// sign is the named signing function: HMAC-SHA256 of the body.
func sign(sg *signSpec, key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	sum := m.Sum(nil)
	if sg.Encoding == "base64" {
		return sg.Prefix + base64.StdEncoding.EncodeToString(sum)
	}
	return sg.Prefix + hex.EncodeToString(sum)
}

// Finish closes every connection and writes summary.kinds.
func (s *scenario) Finish(res *load.Result, merged *load.Recorder) {
	for _, c := range s.conns {
		if c.ws != nil {
			c.ws.Close()
		}
	}
	out := map[string]*KindSummary{}
	for k, kd := range s.spec.kinds {
		ks := &KindSummary{Type: kd.typ, ErrorsByReason: map[string]int64{}}
		var hist *load.Histogram
		var sum kindStats
		for _, sh := range s.shards {
			sh.mu.Lock()
			st := &sh.kinds[k]
			sum.sent += st.sent
			sum.received += st.received
			sum.expected += st.expected
			sum.gaps += st.gaps
			sum.rateLimited += st.rateLimited
			sum.own += st.own
			sum.late += st.late
			for r, n := range st.errs {
				ks.ErrorsByReason[r] += n
			}
			if st.hist != nil {
				if hist == nil {
					hist = load.NewHistogram()
				}
				hist.Merge(st.hist)
			}
			sh.mu.Unlock()
		}
		ks.Sent, ks.Received, ks.Gaps, ks.RateLimited, ks.Own, ks.Late = sum.sent, sum.received, sum.gaps, sum.rateLimited, sum.own, sum.late
		if kd.hasExp {
			e := sum.expected
			ks.Expected = &e
			if e > 0 {
				pct := 100 * float64(min(sum.received, e)) / float64(e)
				ks.DeliveredPct = &pct
			}
		}
		if hist != nil {
			ks.Latency = hist.Latency()
		}
		out[kd.name] = ks
	}
	for _, sh := range s.shards {
		s.unmatched += sh.unmatched
	}
	s.kinds = out
	if res != nil {
		s.mode(res)
		// Both marshal: a map of plain structs, an integer.
		res.Summary.SetBlock(BlockKinds, out)
		res.Summary.SetBlock(BlockUnmatched, s.unmatched)
	}
}

// Kinds is the summary.kinds block Finish computed.
func (s *scenario) Kinds() map[string]*KindSummary { return s.kinds }

// Unmatched counts messages received in the window that matched no
// receive kind, answer, rate_limited or errors entry.
func (s *scenario) Unmatched() int64 { return s.unmatched }

// KindSummary is summary.kinds.<kind>.
type KindSummary struct {
	// Type is send (a send no receive kind of the same name answers),
	// relay, ack or ignore.
	Type string `json:"type"`
	// Sent counts sends in the window: of the send of this name, or, for
	// a relay or ack of another name, of the send it answers.
	Sent int64 `json:"sent"`
	// Received counts relays and acks of sends in the window that arrived
	// before the drain ended (ignore: messages received in the window).
	Received int64 `json:"received"`
	// Expected is relay: sends x the other members of the sender's room;
	// ack: sends. Null for send, ignore and coalesced relays.
	Expected     *int64   `json:"expected"`
	DeliveredPct *float64 `json:"delivered_pct"`
	// Latency: relay, now - the sender's timestamp, at the other
	// clients; ack, back at the sender; an HTTP send-only kind, the
	// request's round trip.
	Latency        load.Latency     `json:"latency_ns"`
	Gaps           int64            `json:"gaps"`
	RateLimited    int64            `json:"rate_limited"`
	Own            int64            `json:"own"`  // relays of this client's own sends (sender field)
	Late           int64            `json:"late"` // arrived after the drain
	ErrorsByReason map[string]int64 `json:"errors_by_reason"`
}

// NothingArrived says what was sent when nothing came back.
func (s *scenario) NothingArrived(res *load.Result, why string) error {
	var parts []string
	for _, kd := range s.spec.kinds {
		if k := s.kinds[kd.name]; k != nil && kd.typ == "send" || k != nil && k.Expected != nil {
			p := fmt.Sprintf("%s: %d sent", kd.name, k.Sent)
			if k.Expected != nil {
				p += fmt.Sprintf(", 0 of %d expected arrived", *k.Expected)
			}
			parts = append(parts, p)
		}
	}
	return fmt.Errorf("%w: %s%s", load.ErrNothingArrived, strings.Join(parts, "; "), why)
}

// mode corrects the common summary's mode: --rate is 0 for a scenario
// file, but its sends are paced by their own rates. With any open-loop
// send the run is "open" and requested_ops_per_s is the sum of the rates
// of the connections that opened.
func (s *scenario) mode(res *load.Result) {
	var requested float64
	for _, c := range s.conns {
		if c.ws == nil && c.role.WebSocket {
			continue
		}
		for _, sd := range c.role.Sends {
			requested += sd.Rate
		}
	}
	if requested > 0 {
		res.Summary.Mode = "open"
		res.Summary.RequestedOpsPerS = &requested
	}
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
