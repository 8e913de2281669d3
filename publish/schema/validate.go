package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Problem is one place where a document breaks the schema.
type Problem struct {
	Path string // e.g. "curve[3].verdict"; "" is the document itself
	Msg  string // e.g. "missing"
}

func (p Problem) String() string {
	if p.Path == "" {
		return "document: " + p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Schema is a compiled schema document.
type Schema struct {
	root node
	defs map[string]node
}

type node struct {
	Types      typeList        `json:"type"`
	Required   []string        `json:"required"`
	Properties map[string]node `json:"properties"`
	Items      *node           `json:"items"`
	Enum       []any           `json:"enum"`
	Const      any             `json:"const"`
	Minimum    *json.Number    `json:"minimum"`
	MinItems   *int            `json:"minItems"`
	MinLength  *int            `json:"minLength"`
	Pattern    string          `json:"pattern"`
	Ref        string          `json:"$ref"`
	Defs       map[string]node `json:"$defs"`

	re *regexp.Regexp
}

// typeList accepts "type": "x" and "type": ["x", "y"].
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("type: want a string or a list of strings: %w", err)
	}
	*t = many
	return nil
}

// Compile parses a schema document.
func Compile(doc []byte) (*Schema, error) {
	var root node
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s := &Schema{root: root, defs: root.Defs}
	if err := s.compilePatterns(&s.root, "#"); err != nil {
		return nil, err
	}
	for name, d := range s.defs {
		if err := s.compilePatterns(&d, "#/$defs/"+name); err != nil {
			return nil, err
		}
		s.defs[name] = d
	}
	return s, nil
}

func (s *Schema) compilePatterns(n *node, at string) error {
	if n.Pattern != "" {
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			return fmt.Errorf("schema %s: pattern: %w", at, err)
		}
		n.re = re
	}
	if n.Ref != "" {
		if _, ok := s.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]; !ok || !strings.HasPrefix(n.Ref, "#/$defs/") {
			return fmt.Errorf("schema %s: $ref %q: only #/$defs/<name> of this file is supported", at, n.Ref)
		}
	}
	for k, p := range n.Properties {
		if err := s.compilePatterns(&p, at+"/properties/"+k); err != nil {
			return err
		}
		n.Properties[k] = p
	}
	if n.Items != nil {
		return s.compilePatterns(n.Items, at+"/items")
	}
	return nil
}

// Decode parses JSON with numbers kept exact (json.Number), the form
// Validate expects.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Validate returns every problem of v (as decoded by Decode), in document
// order: object keys sorted, array elements by index.
func (s *Schema) Validate(v any) []Problem {
	var out []Problem
	s.check(&s.root, v, "", &out)
	return out
}

func (s *Schema) check(n *node, v any, path string, out *[]Problem) {
	if n.Ref != "" {
		d := s.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
		n = &d
	}
	add := func(format string, args ...any) {
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if len(n.Types) > 0 && !typeMatches(n.Types, v) {
		add("want %s, got %s", strings.Join(n.Types, " or "), typeName(v))
		return
	}
	if n.Const != nil && !equal(n.Const, v) {
		add("unsupported value %s (want %s)", render(v), render(n.Const))
		return
	}
	if len(n.Enum) > 0 {
		ok := false
		for _, e := range n.Enum {
			ok = ok || equal(e, v)
		}
		if !ok {
			var names []string
			for _, e := range n.Enum {
				names = append(names, render(e))
			}
			add("%s is not one of %s", render(v), strings.Join(names, ", "))
			return
		}
	}
	switch x := v.(type) {
	case json.Number:
		if n.Minimum != nil && cmpNumber(x, *n.Minimum) < 0 {
			add("%s is below the minimum %s", x, *n.Minimum)
		}
	case string:
		if n.MinLength != nil && len(x) < *n.MinLength {
			if x == "" {
				add("empty")
			} else {
				add("shorter than %d characters", *n.MinLength)
			}
		}
		if n.re != nil && !n.re.MatchString(x) {
			add("%s does not match %s", render(x), n.Pattern)
		}
	case []any:
		if n.MinItems != nil && len(x) < *n.MinItems {
			add("want at least %d item(s), got %d", *n.MinItems, len(x))
		}
		if n.Items != nil {
			for i, e := range x {
				s.check(n.Items, e, fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	case map[string]any:
		for _, r := range n.Required {
			if _, ok := x[r]; !ok {
				*out = append(*out, Problem{Path: join(path, r), Msg: "missing"})
			}
		}
		keys := make([]string, 0, len(n.Properties))
		for k := range n.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if e, ok := x[k]; ok {
				p := n.Properties[k]
				s.check(&p, e, join(path, k), out)
			}
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func typeMatches(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case json.Number:
			if t == "number" {
				return true
			}
			if t == "integer" {
				if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
					return true
				}
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "integer"
		}
		return "number " + x.String()
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// render quotes a value for a message; strings are truncated and quoted so
// that a hostile document cannot forge lines of the error.
func render(v any) string {
	if s, ok := v.(string); ok {
		if len(s) > 60 {
			s = s[:60] + "..."
		}
		return strconv.Quote(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func equal(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		return cmpNumber(an, bn) == 0
	}
	return render(a) == render(b)
}

func cmpNumber(a, b json.Number) int {
	x, _, errA := big.ParseFloat(a.String(), 10, 256, big.ToNearestEven)
	y, _, errB := big.ParseFloat(b.String(), 10, 256, big.ToNearestEven)
	if errA != nil || errB != nil {
		return strings.Compare(a.String(), b.String())
	}
	return x.Cmp(y)
}
