package script

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// scenario drives one scenario file: Connect dials and runs the handshake
// (blocking, before the window); Load hands every WebSocket connection to
// an engine (loop.go: event loops; goroutines.go: a reader and a writer
// per connection) that calls the connection's handler (handler.go), and
// runs the HTTP senders on goroutines. Statistics live in shards, one
// histogram per kind per shard, merged in Finish (finish.go).
type scenario struct {
	cfg   *load.Config
	pool  *payload.Pool
	spec  *Spec
	keys  map[string][]byte
	io    string // IOLoop or IOGoroutines
	rooms int
	conns []*conn
	// members[r] is the number of open WebSocket connections in room r,
	// set when Load starts.
	members []int64
	// shards: one per event loop (only that loop touches its own), and
	// the goroutine engine's (locked), made when Load needs them: each
	// holds a histogram per kind (about 270 KB each).
	shards   []*shard
	goShards []*shard
	httpc    *http.Client
	baseURL  string          // --url without a trailing slash ({url})
	httpURL  string          // the same with http:// ({http_url})
	reqCtx   context.Context // HTTP sends: ends at the drain
	ctx      context.Context // Load's: cancelled, nothing more is counted
	w        load.Window     // Load's

	loops load.LoopRunner // --io loop: the event loops' run, counters and evidence

	kinds     map[string]*KindSummary
	unmatched int64
}

// shard is one group of connections' statistics: a loop's connections
// (no lock: only the loop's goroutine records), or, on the goroutine
// engine, the connections i with i mod shards == its index (under its
// lock, taken only by those connections).
type shard struct {
	locked    bool
	mu        sync.Mutex
	rec       *load.Recorder
	kinds     []kindStats
	unmatched int64
	reasons   map[string]string // server error reasons seen, by raw value
}

func (sh *shard) lock() {
	if sh.locked {
		sh.mu.Lock()
	}
}

func (sh *shard) unlock() {
	if sh.locked {
		sh.mu.Unlock()
	}
}

func (s *scenario) newShard(locked bool) *shard {
	sh := &shard{locked: locked, rec: load.NewRecorder(true, true), kinds: make([]kindStats, len(s.spec.kinds)), reasons: map[string]string{}}
	for k, kd := range s.spec.kinds {
		if kd.recv != nil && kd.typ != "ignore" || kd.typ == "send" {
			sh.kinds[k].hist = load.NewHistogram()
		}
	}
	return sh
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
	out  link   // the engine's side of the connection, from Load on
	g    *goRun // the goroutine engine's state; nil on a loop

	client  []byte // the rendered client_id
	clientQ []byte // the same as a JSON string, for sender comparison
	others  int64  // members of its room other than itself

	// send state
	vs        vars
	seq       []int64
	k         []int64 // open loop: sends of each kind scheduled so far
	next      int
	body, id  []byte
	answer    []byte
	turn      int   // closed loop: sends so far (they take turns)
	awaiting  bool  // closed loop: a send awaits its ack
	awaitSend int   // ... which one
	sentAt    int64 // ... sent then
	broken    bool  // a WebSocket write failed (goroutine engine)
	writeErr  error // ... with this error

	idMu sync.Mutex         // ids, on the goroutine engine (locked)
	ids  map[uint64]idEntry // sends awaiting an ack or a refusal, by idKey; made on first use

	lastSend atomic.Int32
	detached atomic.Bool // ws belongs to an event loop (its counters are the loop's)

	// pending is the rest of the last frame when connect.split is
	// "newline": its messages still to handle (aliases the read buffer,
	// valid until the next ReadMessage, which only runs once it is empty).
	pending []byte

	// receive state
	rvs        vars
	cache      []cacheEntry
	fields     [numFields][]byte
	top        [numFields][]byte
	version    int64
	hasVersion bool
}

func (c *conn) lockIDs() {
	if c.g != nil {
		c.idMu.Lock()
	}
}

func (c *conn) unlockIDs() {
	if c.g != nil {
		c.idMu.Unlock()
	}
}

// idKey is the key of a send's id in conn.ids: a 64-bit hash of its
// bytes, so remembering a send allocates no string (a collision among a
// connection's at most maxIDs outstanding ids is about as likely as 1 in
// 10^10).
func idKey(id []byte) uint64 { return maphash.Bytes(idSeed, id) }

var idSeed = maphash.MakeSeed()

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
	// Read-only values every connection shares (thousands of connections:
	// one copy each would be bytes per connection for nothing).
	baseURL, httpURL := []byte(s.baseURL), []byte(s.httpURL)
	roleNames := make([][]byte, len(spec.Roles))
	for r, ro := range spec.Roles {
		roleNames[r] = []byte(ro.Name)
	}
	for i := range c.Connections {
		cn := &conn{
			s:     s,
			i:     i,
			room:  i % s.rooms,
			role:  spec.Roles[roles[i]],
			cache: make([]cacheEntry, len(spec.paths)),
			next:  pool.Start(i, 1),
		}
		cn.seq = make([]int64, len(cn.role.Sends))
		cn.k = make([]int64, len(cn.role.Sends))
		cn.lastSend.Store(-1)
		for _, vs := range []*vars{&cn.vs, &cn.rvs} {
			vs.ints[varRoom] = int64(cn.room)
			vs.ints[varConn] = int64(i)
			vs.strs[varRole] = roleNames[roles[i]]
			vs.strs[varURL] = baseURL
			vs.strs[varHTTPURL] = httpURL
		}
		cn.client = spec.ClientID.Append(nil, &cn.vs)
		cn.vs.strs[varClient] = cn.client
		cn.rvs.strs[varClient] = cn.client
		cn.clientQ = append(jsonscan.AppendVerbatim([]byte{'"'}, cn.client), '"')
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
	// Thousands of connections of small messages: 32 KiB of read buffer
	// each instead of the default 256 (a larger message is reassembled in
	// wsconn's second buffer), and sends are framed into the connection's
	// own buffer, so wsconn's is for the handshake only. A connection
	// bound for an event loop needs wsconn's buffers for the handshake
	// only (Detach releases them; the loop reads into its own).
	opts := wsconn.Options{Header: hdr, ReadBufferSize: 32 << 10, WriteBufferSize: 4 << 10}
	if s.onLoop(c) {
		opts.ReadBufferSize, opts.WriteBufferSize = 4<<10, 512
	}
	ws, err := wsconn.Dial(ctx, cs.URL.String(&c.vs), opts)
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
				// The server's answer, not the load: a point where every
				// connection meets it is one every point would meet.
				ws.Close()
				return &load.Refused{Err: errHandshake{msg: truncate(msg)}}
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
	if s.onLoop(c) {
		ws.Shrink() // idle until Load hands it to a loop: no buffers meanwhile
	}
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
		if c.ws != nil && !c.detached.Load() {
			reads += c.ws.Reads()
			messages += c.ws.Messages()
		}
	}
	r, m := s.loops.Counters()
	return reads + r, messages + m
}

// hasHTTP reports whether any of the role's sends is an HTTP request (a
// blocking call: such a connection runs on the goroutine engine).
func (r *roleSpec) hasHTTP() bool {
	for _, sd := range r.Sends {
		if sd.HTTP != nil {
			return true
		}
	}
	return false
}

// goShard is the goroutine engine's shard of connection c: a few per CPU,
// connection i in shard i mod their number, made on first use.
func (s *scenario) goShard(c *conn) *shard {
	if s.goShards == nil {
		for range min(len(s.conns), 2*runtime.GOMAXPROCS(0)) {
			s.goShards = append(s.goShards, s.newShard(true))
		}
		s.shards = append(s.shards, s.goShards...)
	}
	return s.goShards[c.i%len(s.goShards)]
}

// onLoop reports whether the connection, once open, goes on an event loop:
// a WebSocket whose role makes no HTTP send, with --io loop.
func (s *scenario) onLoop(c *conn) bool {
	return s.io == IOLoop && c.role.WebSocket && !c.role.hasHTTP()
}

// Load runs every connection until the window's drain: WebSocket
// connections on the event loops (--io loop) or on goroutines, HTTP
// senders on goroutines.
func (s *scenario) Load(ctx context.Context, w load.Window) []*load.Recorder {
	s.ctx, s.w = ctx, w
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
	var wg sync.WaitGroup
	var onLoops []*conn
	for _, c := range s.conns {
		switch {
		case c.ws == nil && c.role.WebSocket:
			continue // did not open
		case s.onLoop(c):
			onLoops = append(onLoops, c)
			continue
		}
		if c.ws != nil {
			c.ws.SetWriteDeadline(load.MonoTime(w.Drain))
		}
		c.sh = s.goShard(c)
		c.goStart(ctx, done, &wg)
	}
	if len(onLoops) > 0 {
		s.runLoops(ctx, onLoops, done, &wg)
	}
	wg.Wait()
	recs := make([]*load.Recorder, len(s.shards))
	for i, sh := range s.shards {
		recs[i] = sh.rec
	}
	return recs
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

type statusError struct{ code int }

func (e statusError) Error() string { return "HTTP status " + strconv.Itoa(e.code) }

// bodyError is a response body that http.errors matched: the send
// failed whatever the status said.
type bodyError struct{ reason string }

func (e bodyError) Error() string { return "HTTP response body: " + e.reason }

func httpReason(err error) string {
	var se statusError
	if errors.As(err, &se) {
		return "status_" + strconv.Itoa(se.code)
	}
	var be bodyError
	if errors.As(err, &be) {
		return be.reason
	}
	return "send_" + load.Reason(err)
}

// bodyFailed checks a response body against http.errors: the error's
// reason is server_<reason> (the value at its reason path, when short),
// else server_error, as for a server's error message.
func (s *Spec) bodyFailed(es *errorSpec, body []byte) error {
	if es == nil || !s.matchDoc(&es.Match, body) {
		return nil
	}
	r := "server_error"
	if es.Reason != nil {
		if v, ok := lookup(body, es.Reason); ok {
			r = "server_" + boundedReason(v)
		}
	}
	return bodyError{r}
}

// post sends c.body as an HTTP send, signed when the send says so.
func (c *conn) post(sd *sendSpec) error {
	h := sd.HTTP
	rawURL, sig, err := h.render(&c.vs, c.body, c.s.keys, time.Now().Unix())
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(c.s.reqCtx, h.Method, rawURL, bytes.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, hd := range h.Headers {
		req.Header.Set(hd.name, hd.value.String(&c.vs))
	}
	if sg := h.Sign; sg != nil && sg.Header != "" {
		req.Header.Set(sg.Header, sig)
	}
	resp, err := c.s.httpc.Do(req)
	if err != nil {
		return err
	}
	var body []byte
	if h.Errors != nil || h.BodyCode {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError{resp.StatusCode}
	}
	if err := c.s.spec.bodyFailed(h.Errors, body); err != nil || !h.BodyCode {
		return err
	}
	return bodyCodeFailed(body)
}

// bodyCodeFailed is http.body_code's rule: a JSON object whose top-level
// "code" is a number of 400 or more (an integer up to 999) is a refusal,
// an error server_<code>; anything else (no code, a string, a body that
// is not JSON) is not.
func bodyCodeFailed(body []byte) error {
	v, ok := jsonscan.Lookup(body, []string{"code"})
	if !ok {
		return nil
	}
	code, err := strconv.Atoi(string(v))
	if err != nil || code < 400 || code > 999 {
		return nil
	}
	return bodyError{"server_" + strconv.Itoa(code)}
}

// render is an HTTP send's URL for body at the Unix second unixS, with
// the variables its templates name set in vs ({unix_s}, {body_md5},
// {body_sha256}; for a signing string also {method}, {path}, {query},
// {query_escaped}), and its signature (prefix included) when it signs:
// already in the URL when it goes in a query parameter, else for the
// caller's header.
func (h *httpSpec) render(vs *vars, body []byte, keys map[string][]byte, unixS int64) (rawURL, sig string, err error) {
	if h.uses[varUnixS] {
		vs.ints[varUnixS] = unixS
	}
	if h.uses[varBodyMD5] {
		sum := md5.Sum(body)
		vs.strs[varBodyMD5] = hex.AppendEncode(vs.strs[varBodyMD5][:0], sum[:])
	}
	if h.uses[varBodySHA256] {
		sum := sha256.Sum256(body)
		vs.strs[varBodySHA256] = hex.AppendEncode(vs.strs[varBodySHA256][:0], sum[:])
	}
	rawURL = h.URL.String(vs)
	sg := h.Sign
	if sg == nil {
		return rawURL, "", nil
	}
	if sg.String == nil && sg.Query == "" {
		return rawURL, sign(sg, keys[sg.KeyEnv], body), nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	if sg.Query != "" {
		q.Del(sg.Query) // never signed: it is what the signature goes in
	}
	toSign := body
	if sg.String != nil {
		vs.strs[varMethod] = append(vs.strs[varMethod][:0], h.Method...)
		vs.strs[varPath] = append(vs.strs[varPath][:0], u.Path...)
		vs.strs[varQuery] = canonicalQuery(vs.strs[varQuery][:0], q, false)
		vs.strs[varQueryEscaped] = canonicalQuery(vs.strs[varQueryEscaped][:0], q, true)
		toSign = sg.String.Append(nil, vs)
	}
	sig = sign(sg, keys[sg.KeyEnv], toSign)
	if sg.Query == "" {
		return rawURL, sig, nil
	}
	q.Set(sg.Query, sig)
	u.RawQuery = q.Encode()
	return u.String(), sig, nil
}

// canonicalQuery appends q's pairs sorted by key, then value, as k=v
// joined with '&': raw (Pusher signs the values as they are), or with
// keys and values escaped as RFC 3986 says (%20 for a space, as AWS's
// canonical query string has them).
func canonicalQuery(b []byte, q url.Values, escape bool) []byte {
	type kv struct{ k, v string }
	var pairs []kv
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, kv{k, v})
		}
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	esc := func(s string) string {
		if !escape {
			return s
		}
		return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
	}
	for i, p := range pairs {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(append(append(b, esc(p.k)...), '='), esc(p.v)...)
	}
	return b
}

// sign is the signing function: HMAC-SHA256 of data (the body, or the
// rendered signing string), keyed by key, encoded, after the prefix.
func sign(sg *signSpec, key, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	sum := m.Sum(nil)
	if sg.Encoding == "base64" {
		return sg.Prefix + base64.StdEncoding.EncodeToString(sum)
	}
	return sg.Prefix + hex.EncodeToString(sum)
}
