package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/objective"
)

// Limits on a scenario file, which may come from anyone's repository: a
// file the harness reads whole and a JSON it walks by recursion.
const (
	MaxFileBytes = 1 << 20 // 1 MiB
	MaxDepth     = 64      // nested objects and arrays
	// MinRate is the lowest open-loop rate a send may ask, per
	// connection: one message in about 17 minutes.
	MinRate = 1e-3
)

// ParseFile reads and compiles a scenario file. Errors are "<file>:
// <json path>: <problem>".
func ParseFile(file string) (*Spec, error) {
	b, err := ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// ReadFile reads a scenario file of at most MaxFileBytes; a larger one
// is an error before it is read whole.
func ReadFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: over %d bytes (1 MiB), the most a scenario file may be", file, MaxFileBytes)
	}
	return b, nil
}

// depth is the deepest nesting of objects and arrays in the JSON b
// (strings skipped), stopping once past limit.
func depth(b []byte, limit int) int {
	d, most, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			if most = max(most, d); most > limit {
				return most
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// Parse compiles a scenario file's contents.
func Parse(b []byte) (*Spec, error) {
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes: at most %d (1 MiB)", len(b), MaxFileBytes)
	}
	if d := depth(b, MaxDepth); d > MaxDepth {
		return nil, fmt.Errorf("objects and arrays nested more than %d deep", MaxDepth)
	}
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
	p.s.EnvNames = envNames(b, p.s)
	return p.s, nil
}

// envNames are the variables a file reads: every {env:NAME} written in it
// (anywhere: a superset of the headers that expand them) and every signing
// key's key_env; sorted, once each.
func envNames(b []byte, s *Spec) []string {
	seen := map[string]bool{}
	for _, m := range envPattern.FindAll(b, -1) {
		seen[string(m[len("{env:"):len(m)-1])] = true
	}
	for _, r := range s.Roles {
		for _, sd := range r.Sends {
			if sd.HTTP != nil && sd.HTTP.Sign != nil {
				seen[sd.HTTP.Sign.KeyEnv] = true
			}
		}
	}
	delete(seen, "")
	return slices.Sorted(maps.Keys(seen))
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
	if s.ClientID, err = compileTextEnv(cid, varsClientID); err != nil {
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
		if s.Errors, err = p.errors(n); err != nil {
			return err
		}
	}
	return nil
}

// errors parses an "errors" object: {"match": MATCH, "reason": PATH}, of
// the server's messages (top level) or of an HTTP send's response bodies.
func (p *parser) errors(n node) (*errorSpec, error) {
	eo, err := n.object("match", "reason")
	if err != nil {
		return nil, err
	}
	es := &errorSpec{}
	if es.Match, err = p.matcher(eo, "match", true); err != nil {
		return nil, err
	}
	if es.Reason, err = pathField(eo, "reason"); err != nil {
		return nil, err
	}
	return es, nil
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
	} else if s.Connect.URL, err = compileTextEnv(u, varsConnURL); err != nil {
		return co.child("url").errf("%v", err)
	} else if err := underBase(u, "{url}"); err != nil {
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
		if err := p.handshake(hn); err != nil {
			return err
		}
	}
	if an, ok := co.get("answers"); ok {
		if err := p.answers(an); err != nil {
			return err
		}
	}
	return nil
}

// handshake reads connect.handshake: the steps run in order on a new
// connection, each a send, an awaited match, or both.
func (p *parser) handshake(hn node) error {
	s := p.s
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
	return nil
}

// answers reads connect.answers: messages matched on arrival and answered
// at once.
func (p *parser) answers(an node) error {
	s := p.s
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
		t, err := compileTextEnv(m[k], allowed)
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

// compileTextEnv is compileText after expandEnv: a text template's
// {env:NAME} are read once, when the file is read. It is checked as
// written first, so that an error never quotes a value read from the
// environment.
func compileTextEnv(s string, allowed []int) (*Template, error) {
	if _, err := compileText(envPattern.ReplaceAllString(s, "x"), allowed); err != nil {
		return nil, err
	}
	v, err := expandEnv(s)
	if err != nil {
		return nil, err
	}
	return compileText(v, allowed)
}

// expandEnv replaces every {env:NAME} of a template with the variable's
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

// underBase refuses a URL template that does not start with base ({url}
// or {http_url}, the --url the caller gave: in a sweep, the target's own
// address) followed by a path, a query or nothing. A file then cannot send
// its headers, {env:NAME} values included, to a host of its own choosing:
// not by a literal host, and not by a suffix that moves the host
// ("{url}@evil.example", "{url}.evil.example").
func underBase(tmpl, base string) error {
	rest, ok := strings.CutPrefix(tmpl, base)
	if !ok {
		return fmt.Errorf("%q must start with %s (the server under test's address, --url): a file may not name a host of its own", tmpl, base)
	}
	if rest != "" && !strings.ContainsAny(rest[:1], "/?#") {
		return fmt.Errorf("%q: after %s comes a path (/), a query (?) or nothing, not %q, which would change the host", tmpl, base, rest[:1])
	}
	return nil
}
