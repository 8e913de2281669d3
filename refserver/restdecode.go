package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
	"github.com/ceiling-bench/ceiling/pusher"
)

// The REST bodies are decoded by a small scanner instead of
// encoding/json: one pass, no reflection, strings and numbers checked by
// internal/jsonscan's strict scanners, and an event's data is kept as
// the JSON string literal it was sent as, then copied into the frame
// verbatim (it is a JSON string either way, so no unquote and requote).
// Semantics follow encoding/json on valid UTF-8 (keys matched without
// case, null leaves a field alone, last duplicate wins, unknown keys
// skipped); a fuzz test holds the two together. The caller rejects
// invalid UTF-8 first, as Pusher does.

// rawEvent is one decoded event. nameLit and dataLit alias the request
// body, so they are valid only while the request is handled.
type rawEvent struct {
	nameLit  []byte // JSON string literal as sent, quotes included
	name     string // unquoted, for checks
	dataLit  []byte // JSON string literal as sent; nil when absent
	channel  string
	channels []string
	socketID string
}

// targets is channels plus channel, as pusher.Event.Targets.
func (e *rawEvent) targets() []string { return pusher.Targets(e.channel, e.channels) }

// maxDepth matches encoding/json's nesting limit, and keeps a body of
// many '[' from recursing without bound.
const maxDepth = 10000

type decoder struct {
	b     []byte
	i     int
	depth int
	names map[string]string // channel names interned per request
}

// errTooMany is returned by batch when the batch is over the limit.
var errTooMany = errors.New("too many events")

func (d *decoder) syntax(msg string) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.i, msg)
}

func (d *decoder) ws() { d.i = jsonscan.SkipWS(d.b, d.i) }

func (d *decoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) expect(c byte) error {
	d.ws()
	if d.peek() != c {
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of input")
		}
		return d.syntax(fmt.Sprintf("want %q, got %q", c, d.b[d.i]))
	}
	d.i++
	return nil
}

// end checks nothing but whitespace follows the top-level value.
func (d *decoder) end() error {
	d.ws()
	if d.i != len(d.b) {
		return d.syntax("data after the top-level value")
	}
	return nil
}

// str scans a string literal at d.i and returns it with its quotes, and
// whether it holds escapes. On an error d.i is at the fault.
func (d *decoder) str() (lit []byte, esc bool, err error) {
	if d.peek() != '"' {
		return nil, false, d.syntax("want a string")
	}
	end, esc, fault := jsonscan.ScanString(d.b, d.i)
	if fault != "" {
		d.i = end
		return nil, false, d.syntax(fault)
	}
	lit, d.i = d.b[d.i:end], end
	return lit, esc, nil
}

// unquote turns a literal from str into its string. Escapes are rare in
// names and channels; encoding/json handles them (surrogates and all).
func unquote(lit []byte, esc bool) (string, error) {
	if !esc {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// literal consumes true, false or null.
func (d *decoder) literal(word string) error {
	if !bytes.HasPrefix(d.b[d.i:], []byte(word)) {
		return d.syntax("invalid literal")
	}
	d.i += len(word)
	return nil
}

// null consumes a null if one is next.
func (d *decoder) null() (bool, error) {
	d.ws()
	if d.peek() != 'n' {
		return false, nil
	}
	return true, d.literal("null")
}

// number consumes a number; on an error d.i is where its grammar failed.
func (d *decoder) number() error {
	end, ok := jsonscan.ScanNumber(d.b, d.i)
	d.i = end
	if !ok {
		return d.syntax("invalid number")
	}
	return nil
}

// skip consumes any value, checking its syntax.
func (d *decoder) skip() error {
	d.ws()
	switch c := d.peek(); {
	case c == '"':
		_, _, err := d.str()
		return err
	case c == '{' || c == '[':
		d.depth++
		if d.depth > maxDepth {
			return d.syntax("nested too deeply")
		}
		defer func() { d.depth-- }()
		if c == '{' {
			return d.object(func([]byte) error { return d.skip() })
		}
		return d.array(d.skip)
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 0 && d.i >= len(d.b):
		return d.syntax("unexpected end of input")
	default:
		return d.syntax(fmt.Sprintf("unexpected %q", c))
	}
}

// object consumes {...}, calling field for each key with d.i at its value
// (field must consume it).
func (d *decoder) object(field func(key []byte) error) error {
	if err := d.expect('{'); err != nil {
		return err
	}
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		lit, esc, err := d.str()
		if err != nil {
			return err
		}
		key := lit[1 : len(lit)-1]
		if esc {
			s, err := unquote(lit, esc)
			if err != nil {
				return d.syntax(err.Error())
			}
			key = []byte(s)
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		d.ws()
		if err := field(key); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.syntax(`want "," or "}" after an object field`)
		}
	}
}

// array consumes [...], calling elem with d.i at each element.
func (d *decoder) array(elem func() error) error {
	if err := d.expect('['); err != nil {
		return err
	}
	d.ws()
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return d.syntax(`want "," or "]" after an array element`)
		}
	}
}

// stringField decodes a string-or-null value for field; null leaves *dst
// (and *lit) alone, as encoding/json does.
func (d *decoder) stringField(field string, dst *string, lit *[]byte) error {
	if isNull, err := d.null(); isNull || err != nil {
		return err
	}
	if d.peek() != '"' {
		if err := d.skip(); err != nil {
			return err
		}
		return fmt.Errorf("%q: want a string", field)
	}
	l, esc, err := d.str()
	if err != nil {
		return err
	}
	if lit != nil {
		*lit = l
	}
	if dst != nil {
		s, err := unquote(l, esc)
		if err != nil {
			return d.syntax(err.Error())
		}
		*dst = s
	}
	return nil
}

// channelName unquotes a channel literal, interning it for the request.
func (d *decoder) channelName(lit []byte, esc bool) (string, error) {
	if !esc {
		if s, ok := d.names[string(lit[1:len(lit)-1])]; ok {
			return s, nil
		}
	}
	s, err := unquote(lit, esc)
	if err != nil {
		return "", d.syntax(err.Error())
	}
	if d.names == nil {
		d.names = make(map[string]string)
	}
	d.names[s] = s
	return s, nil
}

// event decodes one event object (or null, which leaves ev zero).
func (d *decoder) event(ev *rawEvent) error {
	if isNull, err := d.null(); isNull || err != nil {
		return err
	}
	if d.peek() != '{' {
		if err := d.skip(); err != nil {
			return err
		}
		return errors.New("want an event object")
	}
	d.depth++
	defer func() { d.depth-- }()
	return d.object(func(key []byte) error {
		switch {
		case fold(key, keyName):
			return d.stringField("name", &ev.name, &ev.nameLit)
		case fold(key, keyData):
			return d.stringField("data", nil, &ev.dataLit)
		case fold(key, keySocketID):
			return d.stringField("socket_id", &ev.socketID, nil)
		case fold(key, keyChannel):
			if isNull, err := d.null(); isNull || err != nil {
				return err
			}
			lit, esc, err := d.str()
			if err != nil {
				if d.peek() != '"' {
					return errors.Join(d.skip(), errors.New(`"channel": want a string`))
				}
				return err
			}
			ev.channel, err = d.channelName(lit, esc)
			return err
		case fold(key, keyChannels):
			if isNull, err := d.null(); isNull || err != nil {
				ev.channels = nil
				return err
			}
			if d.peek() != '[' {
				return errors.Join(d.skip(), errors.New(`"channels": want an array of strings`))
			}
			ev.channels = ev.channels[:0]
			return d.array(func() error {
				d.ws()
				ev.channels = extend(ev.channels)
				if isNull, err := d.null(); isNull || err != nil {
					return err
				}
				lit, esc, err := d.str()
				if err != nil {
					if d.peek() != '"' {
						return errors.Join(d.skip(), errors.New(`"channels": want an array of strings`))
					}
					return err
				}
				name, err := d.channelName(lit, esc)
				ev.channels[len(ev.channels)-1] = name
				return err
			})
		default:
			return d.skip()
		}
	})
}

// Keys, and fold, the key match of encoding/json: case-insensitive.
var (
	keyName     = []byte("name")
	keyData     = []byte("data")
	keySocketID = []byte("socket_id")
	keyChannel  = []byte("channel")
	keyChannels = []byte("channels")
	keyBatch    = []byte("batch")
)

func fold(key, want []byte) bool { return bytes.EqualFold(key, want) }

// extend grows s by one element. Like encoding/json (which this mirrors
// for a key given twice), an element still in the backing array keeps its
// old value; a new one is zero.
func extend[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	var zero T
	return append(s, zero)
}

// decodeEvent decodes the body of POST /apps/{id}/events.
func decodeEvent(body []byte) (rawEvent, error) {
	d := decoder{b: body}
	var ev rawEvent
	d.ws()
	if d.peek() != '{' {
		if err := d.skip(); err != nil {
			return ev, err
		}
		return ev, errors.New("want an event object")
	}
	if err := d.event(&ev); err != nil {
		return ev, err
	}
	return ev, d.end()
}

// decodeBatch decodes {"batch":[...]}, stopping with errTooMany past max
// events.
func decodeBatch(body []byte, max int) ([]rawEvent, error) {
	d := decoder{b: body}
	var events []rawEvent
	d.ws()
	if d.peek() != '{' {
		if err := d.skip(); err != nil {
			return nil, err
		}
		return nil, errors.New(`want an object {"batch":[...]}`)
	}
	err := d.object(func(key []byte) error {
		if !fold(key, keyBatch) {
			return d.skip()
		}
		if isNull, err := d.null(); isNull || err != nil {
			events = nil
			return err
		}
		if d.peek() != '[' {
			return errors.Join(d.skip(), errors.New(`"batch": want an array of events`))
		}
		events = events[:0]
		return d.array(func() error {
			if len(events) == max {
				return errTooMany
			}
			events = extend(events)
			if err := d.event(&events[len(events)-1]); err != nil {
				return fmt.Errorf("batch[%d]: %w", len(events)-1, err)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return events, d.end()
}
