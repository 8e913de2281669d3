package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/ceiling-bench/ceiling/load"
)

// OverrideURL makes url the generator's URL for scenario (--url): the
// block's other fields stay, and a scenario whose block is a URL alone
// (echo) gets one when the target has none.
func (t *Spec) OverrideURL(scenario, url string) {
	t.URL = url
	if d, ok := load.Lookup(scenario); ok && d.Target != nil && d.Target.FromURL != nil {
		if _, has := t.Blocks[d.Target.Key]; !has {
			t.SetBlock(d.Target.Key, d.Target.FromURL(url))
		}
	}
}

// URLFor is the URL the generator is given for a scenario.
func (t Spec) URLFor(scenario string) (string, error) {
	if t.URL != "" {
		if _, err := t.Block(scenario); err != nil {
			return "", err
		}
		return t.URL, nil
	}
	blk, err := t.Block(scenario)
	if err != nil {
		return "", err
	}
	if blk.URL() == "" {
		return "", fmt.Errorf("%s: empty", blk.URLField())
	}
	return blk.URL(), nil
}

// moreURLs are the scenario's URLs after the first, of a block that
// names several servers (load.MultiURLBlock); none when the sweep's --url
// replaced the block's.
func (t Spec) moreURLs(scenario string) []string {
	if t.URL != "" {
		return nil
	}
	blk, err := t.Block(scenario)
	if err != nil {
		return nil
	}
	if m, ok := blk.(load.MultiURLBlock); ok && len(m.URLs()) > 1 {
		return m.URLs()[1:]
	}
	return nil
}

// urlField is the name of the field holding the scenario's URL.
func (t Spec) urlField(scenario string) string {
	if blk, err := t.Block(scenario); err == nil {
		return blk.URLField()
	}
	return BlockKey(scenario)
}

// BlockKey is the scenario's block key in a target file.
func BlockKey(scenario string) string {
	if d, ok := load.Lookup(scenario); ok && d.Target != nil {
		return d.Target.Key
	}
	return scenario
}

// Block is the scenario's parsed block of the target. Errors name the
// block's key.
func (t Spec) Block(scenario string) (load.TargetBlock, error) {
	d, ok := load.Lookup(scenario)
	if !ok {
		return nil, &load.UnknownScenarioError{Name: scenario}
	}
	if d.Target == nil {
		return nil, fmt.Errorf("scenario %s cannot be swept from a target file", scenario)
	}
	if _, ok := t.Blocks[d.Target.Key]; !ok {
		err := fmt.Errorf("%s: the target has no %s block, which scenario %s needs", d.Target.Key, d.Target.Key, scenario)
		var have []string
		for _, key := range sortedKeys(t.Blocks) {
			for _, od := range load.Scenarios() {
				if od.Target != nil && od.Target.Key == key {
					have = append(have, "SCENARIO="+od.Name)
				}
			}
		}
		if len(have) > 0 {
			err = fmt.Errorf("%w (it has blocks for %s)", err, strings.Join(have, ", "))
		}
		return nil, err
	}
	return t.parseBlock(d.Target.Key)
}

// parseBlock parses the block under key with its scenario's parser.
func (t Spec) parseBlock(key string) (load.TargetBlock, error) {
	td := blockDef(key)
	if td == nil {
		return nil, fmt.Errorf("%s: no scenario reads this block", key)
	}
	blk, err := td.Parse(t.Blocks[key])
	if err != nil {
		return nil, BlockError(key, err)
	}
	return blk, nil
}

// BlockError names a block's error by its path in the target file:
// key.field for a load.FieldError, key: for anything else (a JSON error).
func BlockError(key string, err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, BlockError(key, e))
		}
		return errors.Join(errs...)
	}
	var fe *load.FieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s.%w", key, fe)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// SetBlock stores raw as the block under key (a scenario's TargetDef.Key).
func (t *Spec) SetBlock(key string, raw json.RawMessage) {
	if t.Blocks == nil {
		t.Blocks = map[string]json.RawMessage{}
	}
	t.Blocks[key] = raw
}

// blockDef is the target definition that reads the block under key.
func blockDef(key string) *load.TargetDef {
	for _, d := range load.Scenarios() {
		if d.Target != nil && d.Target.Key == key {
			return d.Target
		}
	}
	return nil
}

// targetFields is Spec without its methods, for encoding.
type targetFields Spec

// harnessKeys are the target file's own keys; every other top-level key
// is a scenario's block.
var harnessKeys = sync.OnceValue(func() map[string]bool { return load.JSONFieldNames(reflect.TypeOf(targetFields{})) })

// UnmarshalJSON reads the harness's fields strictly and keeps each
// scenario block raw. A key that is neither is an error naming it.
func (t *Spec) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	own := map[string]json.RawMessage{}
	var blocks map[string]json.RawMessage
	for _, k := range sortedKeys(all) {
		switch {
		case harnessKeys()[k]:
			own[k] = all[k]
		case blockDef(k) != nil:
			if blocks == nil {
				blocks = map[string]json.RawMessage{}
			}
			var c bytes.Buffer
			if err := json.Compact(&c, all[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			blocks[k] = c.Bytes()
		default:
			return fmt.Errorf("json: unknown field %q (not a target field, and no scenario reads a block of that name)", k)
		}
	}
	ownJSON, err := json.Marshal(own)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(ownJSON))
	dec.DisallowUnknownFields()
	var f targetFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*t = Spec(f)
	t.Blocks = blocks
	return nil
}

// MarshalJSON writes the harness's fields and then every block under its
// key, so a Spec written (target.json in a point's work dir) reads
// back the same.
func (t Spec) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(targetFields(t))
	if err != nil {
		return nil, err
	}
	return load.InlineBlocks(b, t.Blocks), nil
}
