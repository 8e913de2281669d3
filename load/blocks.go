package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// SetBlock stores v (marshalled now) as the scenario's summary block under
// key, written inline in the summary: summary.<key>. A key that is one of
// the common summary fields panics: that is a scenario's programming error.
func (s *Summary) SetBlock(key string, v any) error {
	if summaryFields()[key] {
		panic("load: summary block " + key + " collides with a common summary field")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("summary.%s: %w", key, err)
	}
	if s.Blocks == nil {
		s.Blocks = map[string]json.RawMessage{}
	}
	s.Blocks[key] = b
	return nil
}

// Block decodes the block under key into v; false when there is none.
func (s *Summary) Block(key string, v any) (bool, error) {
	raw, ok := s.Blocks[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("summary.%s: %w", key, err)
	}
	return true, nil
}

// MarshalJSON writes the common fields, then the blocks by key.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	b, err := json.Marshal(plain(s))
	if err != nil {
		return nil, err
	}
	return InlineBlocks(b, s.Blocks), nil
}

// InlineBlocks returns the JSON object obj with every block added as a
// member under its key, in key order: how a document with blocks owned by
// others (a summary's, a target file's) is written.
func InlineBlocks(obj []byte, blocks map[string]json.RawMessage) []byte {
	if len(blocks) == 0 {
		return obj
	}
	keys := make([]string, 0, len(blocks))
	for k := range blocks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out bytes.Buffer
	out.Write(obj[:len(obj)-1]) // without the closing brace
	sep := len(bytes.TrimSpace(obj)) > 2
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		if sep {
			out.WriteByte(',')
		}
		sep = true
		out.Write(kb)
		out.WriteByte(':')
		out.Write(blocks[k])
	}
	out.WriteByte('}')
	return out.Bytes()
}

// JSONFieldNames are the JSON member names of a struct type's fields.
func JSONFieldNames(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}

// UnmarshalJSON reads the common fields and keeps every other key as a
// block.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	s.Blocks = nil
	known := summaryFields()
	for k, v := range all {
		if !known[k] {
			if s.Blocks == nil {
				s.Blocks = map[string]json.RawMessage{}
			}
			s.Blocks[k] = v
		}
	}
	return nil
}

var summaryFieldsOnce = sync.OnceValue(func() map[string]bool { return JSONFieldNames(reflect.TypeOf(Summary{})) })

func summaryFields() map[string]bool { return summaryFieldsOnce() }
