package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// node is one value of the scenario file with its JSON path, so that
// every error names the field it is about ("roles[1].share: ...").
type node struct {
	path string
	raw  json.RawMessage
}

// pathError is a bad field: its path and what is wrong.
type pathError struct {
	path string
	msg  string
}

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func (n node) errf(format string, a ...any) error {
	return &pathError{path: n.path, msg: fmt.Sprintf(format, a...)}
}

func (n node) child(key string) node {
	p := key
	if n.path != "" {
		p = n.path + "." + key
	}
	return node{path: p}
}

// kind names the JSON type of the value, for error messages.
func (n node) kind() string {
	b := bytes.TrimSpace(n.raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// object decodes an object and rejects keys outside allowed.
type object struct {
	node
	fields map[string]json.RawMessage
}

func (n node) object(allowed ...string) (*object, error) {
	if n.kind() != "an object" {
		return nil, n.errf("want an object, got %s", n.kind())
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(n.raw, &m); err != nil {
		return nil, n.errf("%v", err)
	}
	if allowed != nil {
		var unknown []string
		for k := range m {
			if !containsStr(allowed, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, n.child(unknown[0]).errf("unknown field (known: %s)", strings.Join(allowed, ", "))
		}
	}
	return &object{node: n, fields: m}, nil
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (o *object) has(key string) bool { _, ok := o.fields[key]; return ok }

func (o *object) get(key string) (node, bool) {
	raw, ok := o.fields[key]
	c := o.child(key)
	c.raw = raw
	return c, ok
}

func (o *object) required(key string) (node, error) {
	n, ok := o.get(key)
	if !ok {
		return n, n.errf("required")
	}
	return n, nil
}

func (o *object) str(key string, def string, required bool) (string, error) {
	n, ok := o.get(key)
	if !ok {
		if required {
			return "", n.errf("required")
		}
		return def, nil
	}
	if n.kind() != "a string" {
		return "", n.errf("want a string, got %s", n.kind())
	}
	var s string
	if err := json.Unmarshal(n.raw, &s); err != nil {
		return "", n.errf("%v", err)
	}
	return s, nil
}

func (o *object) num(key string) (float64, bool, error) {
	n, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	if n.kind() != "a number" {
		return 0, true, n.errf("want a number, got %s", n.kind())
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(n.raw)), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, true, n.errf("want a finite number")
	}
	return f, true, nil
}

func (o *object) integer(key string, def int64, min, max int64) (int64, bool, error) {
	n, ok := o.get(key)
	if !ok {
		return def, false, nil
	}
	if n.kind() != "a number" {
		return 0, true, n.errf("want an integer, got %s", n.kind())
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(n.raw)), 10, 64)
	if err != nil {
		return 0, true, n.errf("want an integer, got %s", bytes.TrimSpace(n.raw))
	}
	if v < min || v > max {
		return 0, true, n.errf("%d is out of range [%d, %d]", v, min, max)
	}
	return v, true, nil
}

func (o *object) boolean(key string, def bool) (bool, error) {
	n, ok := o.get(key)
	if !ok {
		return def, nil
	}
	if n.kind() != "a boolean" {
		return false, n.errf("want true or false, got %s", n.kind())
	}
	return bytes.Equal(bytes.TrimSpace(n.raw), []byte("true")), nil
}

func (n node) array() ([]node, error) {
	if n.kind() != "an array" {
		return nil, n.errf("want an array, got %s", n.kind())
	}
	var xs []json.RawMessage
	if err := json.Unmarshal(n.raw, &xs); err != nil {
		return nil, n.errf("%v", err)
	}
	out := make([]node, len(xs))
	for i, x := range xs {
		out[i] = node{path: fmt.Sprintf("%s[%d]", n.path, i), raw: x}
	}
	return out, nil
}

// strMap decodes an object of string values in key order.
func (n node) strMap() ([]string, map[string]string, error) {
	o, err := n.object()
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(o.fields))
	out := map[string]string{}
	for k := range o.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, err := o.str(k, "", true)
		if err != nil {
			return nil, nil, err
		}
		out[k] = s
	}
	return keys, out, nil
}

func sortStrings(xs []string) { sort.Strings(xs) }
