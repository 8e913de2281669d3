package script

import (
	"math"
	"slices"
	"time"
)

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
			if sd.ID, err = compileTextEnv(id, varsID); err != nil {
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
			if rate < MinRate || rate > 1e6 {
				return so.child("rate").errf("%g: want messages per second per connection in [%g, 1e6] (below that, a connection sends nothing in any window)", rate, MinRate)
			}
			sd.Rate = rate
			open++
		}
		if cn, ok := so.get("closed"); ok {
			if hasRate {
				return sn.errf("give rate (open loop) or closed (closed loop), not both")
			}
			if err := p.closedLoop(sd, cn); err != nil {
				return err
			}
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

// closedLoop reads a send's closed {"await": kind, "timeout_ms": n}: the
// receive kind whose arrival releases the next send, and how long to wait
// for it.
func (p *parser) closedLoop(sd *sendSpec, cn node) error {
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
	return nil
}

func (p *parser) http(n node, allowed []int) (*httpSpec, error) {
	ho, err := n.object("method", "url", "headers", "sign", "errors", "body_code")
	if err != nil {
		return nil, err
	}
	h := &httpSpec{}
	if h.BodyCode, err = ho.boolean("body_code", true); err != nil {
		return nil, err
	}
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
	if h.URL, err = compileTextEnv(u, allowed); err != nil {
		return nil, ho.child("url").errf("%v", err)
	}
	if err := underBase(u, "{http_url}"); err != nil {
		return nil, ho.child("url").errf("%v", err)
	}
	if h.Headers, err = headers(ho, "headers", allowed); err != nil {
		return nil, err
	}
	if en, ok := ho.get("errors"); ok {
		if h.Errors, err = p.errors(en); err != nil {
			return nil, err
		}
	}
	if sn, ok := ho.get("sign"); ok {
		so, err := sn.object("sign", "key_env", "header", "query", "string", "encoding", "prefix")
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
		if sg.Header, err = so.str("header", "", false); err != nil {
			return nil, err
		}
		if sg.Query, err = so.str("query", "", false); err != nil {
			return nil, err
		}
		if (sg.Header == "") == (sg.Query == "") {
			return nil, sn.errf("give header (the signature in a request header) or query (in a query parameter), one of them")
		}
		if so.has("string") {
			text, err := so.str("string", "", true)
			if err != nil {
				return nil, err
			}
			signVars := varsSign
			if !slices.Contains(allowed, varID) {
				signVars = varsSign[:len(varsSign)-1] // {id} is last: only with an id
			}
			if sg.String, err = compileTextEnv(text, signVars); err != nil {
				return nil, so.child("string").errf("%v", err)
			}
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
	for v := range numVars {
		h.uses[v] = h.URL.Uses(v) || h.Sign != nil && h.Sign.String.Uses(v)
		for _, hd := range h.Headers {
			h.uses[v] = h.uses[v] || hd.value.Uses(v)
		}
	}
	return h, nil
}
