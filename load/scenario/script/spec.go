package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/load/objective"
)

// Spec is a parsed, compiled scenario file. It is immutable once parsed
// and shared by every connection.
type Spec struct {
	Name        string
	Description string
	// Objective is the file's service-level objective for a sweep
	// (load/objective syntax), "" when it has none.
	Objective string
	// Ladder and QuickLadder are the file's connection ladders for a
	// sweep ("sweep": {"connections": [...], "quick": [...]}), nil when
	// it gives none.
	Ladder      []int
	QuickLadder []int
	ClientID    *Template
	Connect     connectSpec
	RoomSize    int // members per room (rooms = ceil(connections/size)); 0 when RoomCount is set
	RoomCount   int
	Roles       []*roleSpec
	Receives    []*recvSpec
	RateLimited *rateSpec
	Errors      *errorSpec

	kinds []kindDef  // summary.kinds entries, in file order
	paths [][]string // distinct match paths; matchers index into it
}

type kindDef struct {
	name   string
	typ    string // send | relay | ack | ignore
	send   bool   // some role sends it
	recv   *recvSpec
	hasExp bool // expected is computed (relay, ack; not coalesced)
}

type header struct {
	name  string
	value *Template
}

type connectSpec struct {
	URL         *Template
	Headers     []header
	Subprotocol string
	// SplitLines: connect.split "newline", a frame may hold several
	// messages, one per line.
	SplitLines bool
	Timeout    time.Duration
	Handshake  []step
	Answers    []answer
}

type step struct {
	Send  *Template
	Await *matcher
	Fail  *matcher
}

type answer struct {
	Match matcher
	Reply *Template
}

type roleSpec struct {
	Name      string
	Share     float64 // 0 when not a share role
	Count     int     // -1 when not a count role
	WebSocket bool
	Sends     []*sendSpec
	Closed    bool // the role's sends run in a closed loop
}

type sendSpec struct {
	Name         string
	kind         int
	Message      *Template
	ID           *Template
	Rate         float64 // per connection, per second; 0 in a closed loop
	Await        int     // closed loop: index of the receive kind awaited
	AwaitTimeout time.Duration
	HTTP         *httpSpec
	path         string
	relayKinds   []int // receive kinds relaying this send
	ackKinds     []int
}

type httpSpec struct {
	Method  string
	URL     *Template
	Headers []header
	Sign    *signSpec
}

type signSpec struct {
	Func     string
	KeyEnv   string
	Header   string
	Encoding string
	Prefix   string
	path     string // JSON path of key_env, for errors
}

type recvSpec struct {
	Kind      string
	kind      int
	Type      string
	Match     matcher
	Of        string
	of        *sendSpec // any role's send of that name, for its kind
	TS        []string
	Sender    []string
	Version   []string
	ID        []string
	Coalesced bool

	// When every field path is one top-level key, they are read in one
	// pass: top lists the keys, topIdx[field] is its index in top or -1.
	top    []string
	topIdx [numFields]int
}

// plan decides how r's fields are read.
func (r *recvSpec) plan() {
	r.top = nil
	for f := range r.topIdx {
		r.topIdx[f] = -1
	}
	var keys []string
	for f, p := range [numFields][]string{r.TS, r.Sender, r.Version, r.ID} {
		if p == nil {
			continue
		}
		if len(p) != 1 {
			return
		}
		idx := -1
		for k, key := range keys {
			if key == p[0] {
				idx = k
			}
		}
		if idx < 0 {
			idx = len(keys)
			keys = append(keys, p[0])
		}
		r.topIdx[f] = idx
	}
	if len(keys) > 0 {
		r.top = keys
	}
}

type rateSpec struct {
	Match      *matcher
	ID         []string
	CloseCodes []int
}

type errorSpec struct {
	Match  matcher
	Reason []string
}

type matchField struct {
	path int
	want []byte // compact JSON
}

type matcher struct {
	fields []matchField
	empty  bool // matches the message {} (whitespace aside) and nothing else
}

// ParseFile reads and compiles a scenario file. Errors are "<file>:
// <json path>: <problem>".
func ParseFile(file string) (*Spec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Parse compiles a scenario file's contents.
func Parse(b []byte) (*Spec, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(b[:se.Offset], []byte("\n"))
			return nil, fmt.Errorf("line %d: invalid JSON: %v", line, err)
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	p := &parser{s: &Spec{}}
	if err := p.file(node{raw: b}); err != nil {
		return nil, err
	}
	p.orderMatchers()
	return p.s, nil
}

type parser struct {
	s     *Spec
	sends map[string]*sendSpec // first definition of each send name
}

func (p *parser) file(n node) error {
	o, err := n.object("name", "description", "objective", "sweep", "client_id", "connect", "rooms", "roles", "receives", "rate_limited", "errors")
	if err != nil {
		return err
	}
	s := p.s
	if s.Name, err = o.str("name", "", false); err != nil {
		return err
	}
	if s.Description, err = o.str("description", "", false); err != nil {
		return err
	}
	cid, err := o.str("client_id", "{conn}", false)
	if err != nil {
		return err
	}
	if s.ClientID, err = compileText(cid, varsClientID); err != nil {
		return o.child("client_id").errf("%v", err)
	}
	if err := p.connect(o); err != nil {
		return err
	}
	if err := p.rooms(o); err != nil {
		return err
	}
	// Receives first: sends name the kinds they await.
	rn, ok := o.get("receives")
	if ok {
		if err := p.receives(rn); err != nil {
			return err
		}
	}
	rl, err := o.required("roles")
	if err != nil {
		return err
	}
	if err := p.roles(rl); err != nil {
		return err
	}
	if err := p.link(rn); err != nil {
		return err
	}
	if n, ok := o.get("rate_limited"); ok {
		if err := p.rateLimited(n); err != nil {
			return err
		}
	}
	if s.Objective, err = o.str("objective", "", false); err != nil {
		return err
	}
	if err := p.objective(o.child("objective")); err != nil {
		return err
	}
	if n, ok := o.get("sweep"); ok {
		if err := p.sweep(n); err != nil {
			return err
		}
	}
	if n, ok := o.get("errors"); ok {
		eo, err := n.object("match", "reason")
		if err != nil {
			return err
		}
		es := &errorSpec{}
		if es.Match, err = p.matcher(eo, "match", true); err != nil {
			return err
		}
		if es.Reason, err = pathField(eo, "reason"); err != nil {
			return err
		}
		s.Errors = es
	}
	return nil
}

func (p *parser) connect(o *object) error {
	s := p.s
	s.Connect.Timeout = 10 * time.Second
	url, _ := compileText("{url}", varsConnURL)
	s.Connect.URL = url
	n, ok := o.get("connect")
	if !ok {
		return nil
	}
	co, err := n.object("url", "headers", "subprotocol", "split", "timeout_ms", "handshake", "answers")
	if err != nil {
		return err
	}
	if u, err := co.str("url", "{url}", false); err != nil {
		return err
	} else if s.Connect.URL, err = compileText(u, varsConnURL); err != nil {
		return co.child("url").errf("%v", err)
	}
	if s.Connect.Headers, err = headers(co, "headers", varsConnURL); err != nil {
		return err
	}
	if s.Connect.Subprotocol, err = co.str("subprotocol", "", false); err != nil {
		return err
	}
	switch split, err := co.str("split", "", false); {
	case err != nil:
		return err
	case split == "newline":
		s.Connect.SplitLines = true
	case split != "":
		return co.child("split").errf("%q: want \"newline\" (one message per line of a frame) or leave it out (one message per frame)", split)
	}
	ms, _, err := co.integer("timeout_ms", 10000, 1, 600000)
	if err != nil {
		return err
	}
	s.Connect.Timeout = time.Duration(ms) * time.Millisecond
	if hn, ok := co.get("handshake"); ok {
		steps, err := hn.array()
		if err != nil {
			return err
		}
		for _, sn := range steps {
			so, err := sn.object("send", "await", "fail")
			if err != nil {
				return err
			}
			var st step
			if m, ok := so.get("send"); ok {
				if st.Send, err = compileJSON(m.raw, varsMessage); err != nil {
					return m.errf("%v", err)
				}
			}
			if so.has("await") {
				m, err := p.matcher(so, "await", true)
				if err != nil {
					return err
				}
				st.Await = &m
			}
			if so.has("fail") {
				m, err := p.matcher(so, "fail", true)
				if err != nil {
					return err
				}
				st.Fail = &m
			}
			if st.Send == nil && st.Await == nil {
				return sn.errf("a step needs send, await or both")
			}
			s.Connect.Handshake = append(s.Connect.Handshake, st)
		}
	}
	if an, ok := co.get("answers"); ok {
		as, err := an.array()
		if err != nil {
			return err
		}
		for _, a := range as {
			ao, err := a.object("match", "reply")
			if err != nil {
				return err
			}
			var ans answer
			if ans.Match, err = p.matcher(ao, "match", true); err != nil {
				return err
			}
			rn, err := ao.required("reply")
			if err != nil {
				return err
			}
			if ans.Reply, err = compileJSON(rn.raw, varsMessage); err != nil {
				return rn.errf("%v", err)
			}
			s.Connect.Answers = append(s.Connect.Answers, ans)
		}
	}
	return nil
}

func headers(o *object, key string, allowed []int) ([]header, error) {
	n, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	keys, m, err := n.strMap()
	if err != nil {
		return nil, err
	}
	var hs []header
	for _, k := range keys {
		v, err := expandEnv(m[k])
		if err != nil {
			return nil, n.child(k).errf("%v", err)
		}
		// Checked as written, so an error never quotes a value read from
		// the environment.
		if _, err := compileText(envPattern.ReplaceAllString(m[k], "x"), allowed); err != nil {
			return nil, n.child(k).errf("%v", err)
		}
		t, err := compileText(v, allowed)
		if err != nil {
			return nil, n.child(k).errf("%v", err)
		}
		hs = append(hs, header{name: k, value: t})
	}
	return hs, nil
}

func (p *parser) rooms(o *object) error {
	p.s.RoomCount = 1
	n, ok := o.get("rooms")
	if !ok {
		return nil
	}
	ro, err := n.object("size", "count")
	if err != nil {
		return err
	}
	size, hasSize, err := ro.integer("size", 0, 1, 1<<30)
	if err != nil {
		return err
	}
	count, hasCount, err := ro.integer("count", 0, 1, 1<<30)
	if err != nil {
		return err
	}
	if hasSize == hasCount {
		return n.errf("give exactly one of size (members per room) or count (number of rooms)")
	}
	p.s.RoomSize, p.s.RoomCount = int(size), int(count)
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (p *parser) roles(n node) error {
	s := p.s
	p.sends = map[string]*sendSpec{}
	rs, err := n.array()
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return n.errf("at least one role is needed")
	}
	rest := -1
	sum := 0.0
	hasCount := false
	for i, rn := range rs {
		ro, err := rn.object("name", "share", "count", "websocket", "sends")
		if err != nil {
			return err
		}
		r := &roleSpec{Count: -1}
		if r.Name, err = ro.str("name", "", true); err != nil {
			return err
		}
		if !validName(r.Name) {
			return ro.child("name").errf("%q: want letters, digits, _ or - (at most 64)", r.Name)
		}
		for _, o := range s.Roles {
			if o.Name == r.Name {
				return ro.child("name").errf("%q is already the name of another role", r.Name)
			}
		}
		share, hs, err := ro.num("share")
		if err != nil {
			return err
		}
		count, hc, err := ro.integer("count", 0, 0, 1<<30)
		if err != nil {
			return err
		}
		switch {
		case hs && hc:
			return rn.errf("give share or count, not both")
		case hs:
			if share <= 0 || share > 1 {
				return ro.child("share").errf("%g: want a fraction of the connections in (0, 1] (0.1 is 10%%)", share)
			}
			r.Share = share
			sum += share
		case hc:
			r.Count = int(count)
			hasCount = true
		default:
			if rest >= 0 {
				return rn.errf("roles[%d] already takes the rest of the connections (no share or count); give this role a share or a count", rest)
			}
			rest = i
		}
		if r.WebSocket, err = ro.boolean("websocket", true); err != nil {
			return err
		}
		if sn, ok := ro.get("sends"); ok {
			if err := p.roleSends(r, sn); err != nil {
				return err
			}
		}
		s.Roles = append(s.Roles, r)
	}
	const eps = 1e-9
	switch {
	case sum > 1+eps:
		return n.errf("shares sum to %g, more than 1", sum)
	case rest < 0 && sum > 0 && math.Abs(sum-1) > eps:
		return n.errf("shares sum to %g: with no role taking the rest (a role without share or count) they must sum to 1", sum)
	case rest < 0 && sum == 0 && !hasCount:
		return n.errf("no role has connections")
	}
	return nil
}

func (p *parser) roleSends(r *roleSpec, n node) error {
	ss, err := n.array()
	if err != nil {
		return err
	}
	open, closed := 0, 0
	for _, sn := range ss {
		so, err := sn.object("name", "message", "id", "rate", "closed", "http")
		if err != nil {
			return err
		}
		sd := &sendSpec{Await: -1, path: sn.path}
		if sd.Name, err = so.str("name", "", true); err != nil {
			return err
		}
		if !validName(sd.Name) {
			return so.child("name").errf("%q: want letters, digits, _ or - (at most 64)", sd.Name)
		}
		for _, o := range r.Sends {
			if o.Name == sd.Name {
				return so.child("name").errf("%q is already a send of role %q", sd.Name, r.Name)
			}
		}
		if id, err := so.str("id", "", false); err != nil {
			return err
		} else if id != "" {
			if sd.ID, err = compileText(id, varsID); err != nil {
				return so.child("id").errf("%v", err)
			}
		}
		msgVars := varsMessage
		if sd.ID != nil {
			msgVars = append(append([]int{}, varsMessage...), varID)
		}
		mn, err := so.required("message")
		if err != nil {
			return err
		}
		if sd.Message, err = compileJSON(mn.raw, msgVars); err != nil {
			return mn.errf("%v", err)
		}
		rate, hasRate, err := so.num("rate")
		if err != nil {
			return err
		}
		if hasRate {
			if rate <= 0 || rate > 1e6 {
				return so.child("rate").errf("%g: want messages per second per connection in (0, 1e6]", rate)
			}
			sd.Rate = rate
			open++
		}
		if cn, ok := so.get("closed"); ok {
			if hasRate {
				return sn.errf("give rate (open loop) or closed (closed loop), not both")
			}
			co, err := cn.object("await", "timeout_ms")
			if err != nil {
				return err
			}
			kind, err := co.str("await", "", true)
			if err != nil {
				return err
			}
			sd.Await = -1
			for i, rv := range p.s.Receives {
				if rv.Kind == kind {
					sd.Await = i
				}
			}
			if sd.Await < 0 {
				return co.child("await").errf("%q is not a receive kind (receives[].kind)", kind)
			}
			ms, _, err := co.integer("timeout_ms", 10000, 1, 600000)
			if err != nil {
				return err
			}
			sd.AwaitTimeout = time.Duration(ms) * time.Millisecond
			closed++
		} else if !hasRate {
			return sn.errf("give rate (messages per second per connection, open loop) or closed {\"await\": kind} (closed loop)")
		}
		if hn, ok := so.get("http"); ok {
			httpVars := varsHTTP
			if sd.ID == nil {
				httpVars = varsHTTP[:len(varsHTTP)-1] // {id} is last: only with an id
			}
			if sd.HTTP, err = p.http(hn, httpVars); err != nil {
				return err
			}
		} else if !r.WebSocket {
			return sn.errf("role %q has no WebSocket (websocket: false): its sends need http", r.Name)
		}
		if first, ok := p.sends[sd.Name]; ok {
			sd.kind = first.kind
		} else {
			p.sends[sd.Name] = sd
			sd.kind = len(p.s.kinds)
			p.s.kinds = append(p.s.kinds, kindDef{name: sd.Name, typ: "send", send: true})
		}
		r.Sends = append(r.Sends, sd)
	}
	if open > 0 && closed > 0 {
		return n.errf("role %q mixes open-loop (rate) and closed-loop (closed) sends; a role's sends are all one or the other", r.Name)
	}
	r.Closed = closed > 0
	return nil
}

func (p *parser) http(n node, allowed []int) (*httpSpec, error) {
	ho, err := n.object("method", "url", "headers", "sign")
	if err != nil {
		return nil, err
	}
	h := &httpSpec{}
	if h.Method, err = ho.str("method", "POST", false); err != nil {
		return nil, err
	}
	switch h.Method {
	case "POST", "PUT", "PATCH":
	default:
		return nil, ho.child("method").errf("%q: want POST, PUT or PATCH", h.Method)
	}
	u, err := ho.str("url", "", true)
	if err != nil {
		return nil, err
	}
	if h.URL, err = compileText(u, allowed); err != nil {
		return nil, ho.child("url").errf("%v", err)
	}
	if h.Headers, err = headers(ho, "headers", allowed); err != nil {
		return nil, err
	}
	if sn, ok := ho.get("sign"); ok {
		so, err := sn.object("sign", "key_env", "header", "encoding", "prefix")
		if err != nil {
			return nil, err
		}
		sg := &signSpec{path: so.child("key_env").path}
		if sg.Func, err = so.str("sign", "", true); err != nil {
			return nil, err
		}
		if sg.Func != "hmac_sha256" {
			return nil, so.child("sign").errf("%q: the signing functions are: hmac_sha256", sg.Func)
		}
		if sg.KeyEnv, err = so.str("key_env", "", true); err != nil {
			return nil, err
		}
		if sg.KeyEnv == "" {
			return nil, so.child("key_env").errf("name the environment variable holding the key")
		}
		if sg.Header, err = so.str("header", "", true); err != nil {
			return nil, err
		}
		if sg.Encoding, err = so.str("encoding", "hex", false); err != nil {
			return nil, err
		}
		if sg.Encoding != "hex" && sg.Encoding != "base64" {
			return nil, so.child("encoding").errf("%q: want hex or base64", sg.Encoding)
		}
		if sg.Prefix, err = so.str("prefix", "", false); err != nil {
			return nil, err
		}
		h.Sign = sg
	}
	return h, nil
}

func (p *parser) receives(n node) error {
	rs, err := n.array()
	if err != nil {
		return err
	}
	for _, rn := range rs {
		ro, err := rn.object("kind", "match", "type", "of", "ts", "sender", "version", "id", "coalesced")
		if err != nil {
			return err
		}
		r := &recvSpec{}
		if r.Kind, err = ro.str("kind", "", true); err != nil {
			return err
		}
		if !validName(r.Kind) {
			return ro.child("kind").errf("%q: want letters, digits, _ or - (at most 64)", r.Kind)
		}
		for _, o := range p.s.Receives {
			if o.Kind == r.Kind {
				return ro.child("kind").errf("%q is already a receive kind", r.Kind)
			}
		}
		if r.Match, err = p.matcher(ro, "match", true); err != nil {
			return err
		}
		if r.Type, err = ro.str("type", "", true); err != nil {
			return err
		}
		switch r.Type {
		case "relay", "ack", "ignore":
		default:
			return ro.child("type").errf("%q: want relay, ack or ignore", r.Type)
		}
		if r.Of, err = ro.str("of", "", false); err != nil {
			return err
		}
		for _, f := range []struct {
			key string
			dst *[]string
		}{{"ts", &r.TS}, {"sender", &r.Sender}, {"version", &r.Version}, {"id", &r.ID}} {
			if *f.dst, err = pathField(ro, f.key); err != nil {
				return err
			}
		}
		if r.Coalesced, err = ro.boolean("coalesced", false); err != nil {
			return err
		}
		switch r.Type {
		case "relay":
			if r.TS == nil {
				return rn.errf("a relay kind needs ts: the path of the sender's timestamp ({ts_ns} in the send)")
			}
		case "ack":
			if r.TS == nil && r.ID == nil {
				return rn.errf("an ack kind needs ts (the sender's timestamp echoed) or id (matched to the send's id)")
			}
			if r.Coalesced {
				return ro.child("coalesced").errf("only a relay can be coalesced")
			}
		case "ignore":
			for _, k := range []string{"of", "ts", "id", "coalesced"} {
				if ro.has(k) {
					return ro.child(k).errf("an ignore kind only counts; remove %s", k)
				}
			}
		}
		r.plan()
		p.s.Receives = append(p.s.Receives, r)
	}
	return nil
}

// link ties receive kinds to the sends they answer, once both are parsed,
// and lays out summary.kinds.
func (p *parser) link(rn node) error {
	s := p.s
	for i, r := range s.Receives {
		kn := node{path: fmt.Sprintf("%s[%d]", rn.path, i)}
		if r.Type == "ignore" {
			if _, isSend := p.sends[r.Kind]; isSend {
				return kn.child("kind").errf("%q is the name of a send; an ignore kind needs a name of its own", r.Kind)
			}
			r.kind = len(s.kinds)
			s.kinds = append(s.kinds, kindDef{name: r.Kind, typ: "ignore", recv: r})
			continue
		}
		if r.Of == "" {
			if _, isSend := p.sends[r.Kind]; isSend {
				r.Of = r.Kind
			} else {
				return kn.child("of").errf("required: the name of the send this %s answers", r.Type)
			}
		}
		sd, ok := p.sends[r.Of]
		if !ok {
			return kn.child("of").errf("%q is not the name of any role's send", r.Of)
		}
		r.of = sd
		if r.Type == "ack" && r.TS == nil && sd.ID == nil {
			return kn.errf("an ack matched by id needs the send %q to have an id", r.Of)
		}
		if _, isSend := p.sends[r.Kind]; isSend {
			if r.Of != r.Kind {
				return kn.child("kind").errf("%q is the name of a send; a receive kind of that name must be of it", r.Kind)
			}
			r.kind = sd.kind
			if s.kinds[r.kind].recv != nil {
				return kn.child("kind").errf("%q already has a receive kind", r.Kind)
			}
		} else {
			r.kind = len(s.kinds)
			s.kinds = append(s.kinds, kindDef{name: r.Kind})
		}
		k := &s.kinds[r.kind]
		k.typ, k.recv, k.hasExp = r.Type, r, !r.Coalesced
		for _, role := range s.Roles {
			for _, rs := range role.Sends {
				if rs.Name != r.Of {
					continue
				}
				if r.Type == "relay" {
					rs.relayKinds = append(rs.relayKinds, r.kind)
				} else {
					rs.ackKinds = append(rs.ackKinds, r.kind)
				}
			}
		}
	}
	for _, role := range s.Roles {
		for _, sd := range role.Sends {
			if sd.Await >= 0 {
				r := s.Receives[sd.Await]
				if r.Type != "ack" || r.Of != sd.Name {
					return &pathError{path: sd.path + ".closed.await", msg: fmt.Sprintf("%q is not an ack of this send (want type ack, of %q)", r.Kind, sd.Name)}
				}
			}
		}
	}
	return nil
}

func (p *parser) rateLimited(n node) error {
	ro, err := n.object("match", "id", "close_codes")
	if err != nil {
		return err
	}
	rl := &rateSpec{}
	if ro.has("match") {
		m, err := p.matcher(ro, "match", true)
		if err != nil {
			return err
		}
		rl.Match = &m
	}
	if rl.ID, err = pathField(ro, "id"); err != nil {
		return err
	}
	if cn, ok := ro.get("close_codes"); ok {
		cs, err := cn.array()
		if err != nil {
			return err
		}
		for _, c := range cs {
			var code int
			if c.kind() != "a number" || json.Unmarshal(c.raw, &code) != nil || code < 1000 || code > 4999 {
				return c.errf("want a close code, an integer in [1000, 4999]")
			}
			rl.CloseCodes = append(rl.CloseCodes, code)
		}
	}
	if rl.Match == nil && rl.CloseCodes == nil {
		return n.errf("give match (an error message), close_codes, or both")
	}
	p.s.RateLimited = rl
	return nil
}

// pathField reads an optional dotted field path ("a.b.c").
func pathField(o *object, key string) ([]string, error) {
	s, err := o.str(key, "", false)
	if err != nil || !o.has(key) {
		return nil, err
	}
	return splitPath(o.child(key), s)
}

func splitPath(n node, s string) ([]string, error) {
	if s == "" {
		return nil, n.errf("empty field path")
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return nil, n.errf("%q: empty element in field path", s)
		}
	}
	return parts, nil
}

// matcher reads {"field.path": value, ...}: the message matches when every
// field holds that JSON value.
func (p *parser) matcher(o *object, key string, required bool) (matcher, error) {
	n, ok := o.get(key)
	if !ok {
		if required {
			return matcher{}, n.errf("required")
		}
		return matcher{}, nil
	}
	mo, err := n.object()
	if err != nil {
		return matcher{}, err
	}
	if len(mo.fields) == 0 {
		// {} matches the empty object only (a ping such as Centrifugo's).
		return matcher{empty: true}, nil
	}
	keys := make([]string, 0, len(mo.fields))
	for k := range mo.fields {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var m matcher
	for _, k := range keys {
		path, err := splitPath(n.child(k), k)
		if err != nil {
			return matcher{}, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, mo.fields[k]); err != nil {
			return matcher{}, n.child(k).errf("%v", err)
		}
		m.fields = append(m.fields, matchField{path: p.pathIndex(path), want: c.Bytes()})
	}
	return m, nil
}

func (p *parser) pathIndex(path []string) int {
	for i, q := range p.s.paths {
		if strings.Join(q, ".") == strings.Join(path, ".") {
			return i
		}
	}
	p.s.paths = append(p.s.paths, path)
	return len(p.s.paths) - 1
}

// orderMatchers puts, in every matcher, the fields whose path the file
// matches on most often first: that path ("type") is looked up once per
// message and shared by all matchers, and a matcher that fails on it never
// scans for its rarer fields (a "code" an op message does not have, which
// would cost a scan of the whole message).
func (p *parser) orderMatchers() {
	s := p.s
	uses := make([]int, len(s.paths))
	var all []*matcher
	for i := range s.Connect.Handshake {
		st := &s.Connect.Handshake[i]
		all = append(all, st.Await, st.Fail)
	}
	for i := range s.Connect.Answers {
		all = append(all, &s.Connect.Answers[i].Match)
	}
	if s.RateLimited != nil {
		all = append(all, s.RateLimited.Match)
	}
	if s.Errors != nil {
		all = append(all, &s.Errors.Match)
	}
	for _, r := range s.Receives {
		all = append(all, &r.Match)
	}
	for _, m := range all {
		if m == nil {
			continue
		}
		for _, f := range m.fields {
			uses[f.path]++
		}
	}
	for _, m := range all {
		if m == nil {
			continue
		}
		sort.SliceStable(m.fields, func(a, b int) bool { return uses[m.fields[a].path] > uses[m.fields[b].path] })
	}
}

// objective checks the file's objective: its syntax, and that every
// kinds.<kind> it names is a kind of this file (a typo would make it a
// condition that is never met).
func (p *parser) objective(n node) error {
	if p.s.Objective == "" {
		return nil
	}
	obj, err := objective.Parse(p.s.Objective)
	if err != nil {
		return n.errf("%v", err)
	}
	for _, c := range obj {
		parts := strings.Split(c.Path, ".")
		if parts[0] != BlockKinds {
			continue
		}
		if len(parts) < 3 {
			return n.errf("%q: want kinds.<kind>.<figure>, e.g. kinds.op.latency_ns.p99", c.Path)
		}
		known := false
		for _, k := range p.s.kinds {
			known = known || k.name == parts[1]
		}
		if !known {
			return n.errf("%q: this file has no kind %q", c.Path, parts[1])
		}
	}
	return nil
}

// sweep reads the file's connection ladders: strictly increasing counts,
// each at least 1.
func (p *parser) sweep(n node) error {
	o, err := n.object("connections", "quick")
	if err != nil {
		return err
	}
	ladder := func(key string) ([]int, error) {
		ln, ok := o.get(key)
		if !ok {
			return nil, nil
		}
		xs, err := ln.array()
		if err != nil {
			return nil, err
		}
		if len(xs) == 0 {
			return nil, ln.errf("empty")
		}
		var out []int
		for i, x := range xs {
			v, err := strconv.Atoi(string(bytes.TrimSpace(x.raw)))
			if err != nil || v < 1 {
				return nil, x.errf("want a connection count of at least 1")
			}
			if i > 0 && v <= out[i-1] {
				return nil, x.errf("%d after %d: the ladder must increase", v, out[i-1])
			}
			out = append(out, v)
		}
		return out, nil
	}
	if p.s.Ladder, err = ladder("connections"); err != nil {
		return err
	}
	p.s.QuickLadder, err = ladder("quick")
	return err
}

var envPattern = regexp.MustCompile(`\{env:[^}]*\}`)

// expandEnv replaces every {env:NAME} of a header value with the variable's
// value, read once when the file is read, so a key stays out of the file.
// An unset variable is an error naming it (never its value). Name it like
// a secret (..._KEY, ..._TOKEN) and the sweep redacts its value from all
// it writes.
func expandEnv(s string) (string, error) {
	var out strings.Builder
	for {
		i := strings.Index(s, "{env:")
		if i < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unclosed {env:")
		}
		name := s[i+len("{env:") : i+j]
		if name == "" {
			return "", fmt.Errorf("{env:} names no variable")
		}
		v, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("{env:%s}: %s is not set", name, name)
		}
		out.WriteString(s[:i])
		out.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(v))
		s = s[i+j+1:]
	}
}
