package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
)

// Variables a template may name, as {name}. Which ones a field allows is
// decided by the field (see docs/scenarios.md); an integer variable that is
// the whole of a JSON string in a message template renders as a bare JSON
// number.
const (
	varRoom = iota
	varConn
	varRole
	varClient
	varSeq
	varTsNs
	varPayload
	varID
	varURL
	varHTTPURL
	// An HTTP send's request, for its URL, headers and signing string.
	varUnixS      // the wall clock in Unix seconds when the request is made
	varBodyMD5    // lowercase hex MD5 of the body
	varBodySHA256 // lowercase hex SHA-256 of the body
	// The signing string's only: the request as it goes out.
	varMethod       // POST, PUT or PATCH
	varPath         // the URL's path
	varQuery        // its query: pairs sorted by key then value, k=v, raw, joined with &
	varQueryEscaped // the same, keys and values URL-escaped
	numVars
)

var varNames = [numVars]string{"room", "conn", "role", "client", "seq", "ts_ns", "payload", "id", "url", "http_url",
	"unix_s", "body_md5", "body_sha256", "method", "path", "query", "query_escaped"}

// varInt marks the variables whose value is an integer.
var varInt = [numVars]bool{varRoom: true, varConn: true, varSeq: true, varTsNs: true, varUnixS: true}

func varByName(name string) int {
	for i, n := range varNames {
		if n == name {
			return i
		}
	}
	return -1
}

// Variable sets allowed by the different fields.
var (
	varsConnURL  = []int{varURL, varRoom, varConn, varRole, varClient}
	varsClientID = []int{varRoom, varConn, varRole}
	varsID       = []int{varRoom, varConn, varRole, varClient, varSeq}
	varsMessage  = []int{varRoom, varConn, varRole, varClient, varSeq, varTsNs, varPayload}
	varsHTTP     = []int{varHTTPURL, varRoom, varConn, varRole, varClient, varSeq, varUnixS, varBodyMD5, varBodySHA256, varID}
	// varsSign are a signing string's: an HTTP send's, and the request.
	varsSign = []int{varRoom, varConn, varRole, varClient, varSeq, varUnixS, varBodyMD5, varBodySHA256, varMethod, varPath, varQuery, varQueryEscaped, varID}
)

// segment kinds
const (
	segLit   = iota // literal bytes
	segRaw          // a variable as a bare JSON value (number, or the payload's quoted string)
	segInStr        // a variable inside a JSON string (escaped)
	segText         // a variable in a plain-text template
)

type segment struct {
	kind int
	lit  []byte
	v    int
}

// Template is compiled once, when the file is parsed; Append renders it
// into a caller's buffer.
type Template struct {
	segs []segment
	uses [numVars]bool
}

// Uses reports whether the template names variable v.
func (t *Template) Uses(v int) bool { return t != nil && t.uses[v] }

// vars holds one rendering's values. Strings are kept as bytes so that
// rendering allocates nothing.
type vars struct {
	ints [numVars]int64
	strs [numVars][]byte
}

// Append renders t into b.
func (t *Template) Append(b []byte, vs *vars) []byte {
	for i := range t.segs {
		s := &t.segs[i]
		switch s.kind {
		case segLit:
			b = append(b, s.lit...)
		case segRaw:
			if varInt[s.v] {
				b = strconv.AppendInt(b, vs.ints[s.v], 10)
			} else {
				b = append(b, '"')
				b = jsonscan.AppendVerbatim(b, vs.strs[s.v])
				b = append(b, '"')
			}
		case segInStr:
			if varInt[s.v] {
				b = strconv.AppendInt(b, vs.ints[s.v], 10)
			} else {
				b = jsonscan.AppendVerbatim(b, vs.strs[s.v])
			}
		case segText:
			if varInt[s.v] {
				b = strconv.AppendInt(b, vs.ints[s.v], 10)
			} else {
				b = append(b, vs.strs[s.v]...)
			}
		}
	}
	return b
}

// String renders t with vs into a new string (for connect-time fields).
func (t *Template) String(vs *vars) string { return string(t.Append(nil, vs)) }

// parsePlaceholders splits s into literal text and {variable} references.
// "{{" and "}}" are literal braces. It returns the pieces as segments of
// kind segText (variables) and segLit (text, unescaped).
func parsePlaceholders(s string, allowed []int) ([]segment, error) {
	var segs []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, segment{kind: segLit, lit: []byte(lit.String())})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed { in %q (write {{ for a literal brace)", s)
			}
			name := s[i+1 : i+end]
			v := varByName(name)
			if v < 0 || !contains(allowed, v) {
				return nil, fmt.Errorf("unknown variable {%s} in %q (allowed here: %s)", name, s, varList(allowed))
			}
			flush()
			segs = append(segs, segment{kind: segText, v: v})
			i += end
		case c == '}':
			return nil, fmt.Errorf("unmatched } in %q (write }} for a literal brace)", s)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return segs, nil
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

func varList(allowed []int) string {
	var names []string
	for _, v := range allowed {
		names = append(names, "{"+varNames[v]+"}")
	}
	return strings.Join(names, " ")
}

// compileText compiles a plain-text template (a URL, a header value, an
// id): variables are substituted as text.
func compileText(s string, allowed []int) (*Template, error) {
	segs, err := parsePlaceholders(s, allowed)
	if err != nil {
		return nil, err
	}
	t := &Template{segs: segs}
	t.finish()
	return t, nil
}

// compileJSON compiles a JSON value whose strings may hold {variables}.
// A string that is exactly one integer variable ("{ts_ns}") renders as a
// bare number, "{payload}" alone as a JSON string of the payload; any
// other string renders as a string with the variables substituted (and
// escaped).
func compileJSON(raw json.RawMessage, allowed []int) (*Template, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	b := compact.Bytes()
	t := &Template{}
	lit := []byte{}
	flush := func() {
		if len(lit) > 0 {
			t.segs = append(t.segs, segment{kind: segLit, lit: lit})
			lit = []byte{}
		}
	}
	for i := 0; i < len(b); {
		if b[i] != '"' {
			lit = append(lit, b[i])
			i++
			continue
		}
		end := jsonscan.EndOfString(b, i+1)
		tok := b[i : end+1]
		i = end + 1
		var s string
		if err := json.Unmarshal(tok, &s); err != nil {
			return nil, err
		}
		if !strings.ContainsAny(s, "{}") {
			lit = append(lit, tok...)
			continue
		}
		if strings.Contains(s, "{env:") {
			// Checked as written (an error never quotes the value), then
			// read once, now.
			if _, err := parsePlaceholders(envPattern.ReplaceAllString(s, "x"), allowed); err != nil {
				return nil, err
			}
			v, err := expandEnv(s)
			if err != nil {
				return nil, err
			}
			s = v
		}
		segs, err := parsePlaceholders(s, allowed)
		if err != nil {
			return nil, err
		}
		if len(segs) == 1 && segs[0].kind == segText && (varInt[segs[0].v] || segs[0].v == varPayload) {
			flush()
			t.segs = append(t.segs, segment{kind: segRaw, v: segs[0].v})
			continue
		}
		lit = append(lit, '"')
		for _, sg := range segs {
			if sg.kind == segLit {
				lit = jsonscan.AppendVerbatim(lit, sg.lit)
				continue
			}
			flush()
			t.segs = append(t.segs, segment{kind: segInStr, v: sg.v})
		}
		lit = append(lit, '"')
	}
	flush()
	t.finish()
	return t, nil
}

func (t *Template) finish() {
	for _, s := range t.segs {
		if s.kind != segLit {
			t.uses[s.v] = true
		}
	}
}
