package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

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
	for i, p := range parts {
		if p == "" {
			return nil, n.errf("%q: empty element in field path", s)
		}
		if key, ok := strings.CutSuffix(p, jsonString); ok {
			if key == "" || i == len(parts)-1 {
				return nil, n.errf("%q: %s follows a field whose value is a JSON string, and comes before the path inside it (data%s.ts)", s, jsonString, jsonString)
			}
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
