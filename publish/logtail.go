package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// StripLogTails is raw without any object member named "log_tail" (a
// failed point's server log tail, curve[].log_tail), and how many it cut;
// every other byte is kept as it was. A server's log is its own text: it
// can hold a secret in a form no redaction knows (split over two lines,
// compressed), so a published result leaves it out unless asked
// (CommitOptions.LogTails); the sweep's own result file and work dir
// keep it.
func StripLogTails(raw []byte) ([]byte, int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type span struct{ from, to int64 }
	var cuts []span
	// Each open object: whether a member was read yet.
	var objects []bool
	var inObject []bool // per open container: is it an object
	expectKey := func() bool { return len(inObject) > 0 && inObject[len(inObject)-1] }
	for {
		before := dec.InputOffset()
		if expectKey() && dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, 0, err
			}
			key, _ := tok.(string)
			first := !objects[len(objects)-1]
			objects[len(objects)-1] = true
			if key != "log_tail" {
				if err := skipOrEnter(dec, &inObject, &objects); err != nil {
					return nil, 0, err
				}
				continue
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, 0, err
			}
			end := dec.InputOffset()
			if first {
				// No comma before it: cut the one after, if any.
				i := end
				for i < int64(len(raw)) && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\t') {
					i++
				}
				if i < int64(len(raw)) && raw[i] == ',' {
					end = i + 1
				}
				objects[len(objects)-1] = false // the next member is first now
			}
			cuts = append(cuts, span{before, end})
			continue
		}
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		switch tok {
		case json.Delim('{'):
			inObject, objects = append(inObject, true), append(objects, false)
		case json.Delim('['):
			inObject, objects = append(inObject, false), append(objects, false)
		case json.Delim('}'), json.Delim(']'):
			inObject, objects = inObject[:len(inObject)-1], objects[:len(objects)-1]
		}
	}
	if len(cuts) == 0 {
		return raw, 0, nil
	}
	var out bytes.Buffer
	at := int64(0)
	for _, c := range cuts {
		out.Write(raw[at:c.from])
		at = c.to
	}
	out.Write(raw[at:])
	if !json.Valid(out.Bytes()) {
		return nil, 0, fmt.Errorf("log_tail: cutting %d left invalid JSON", len(cuts))
	}
	return out.Bytes(), len(cuts), nil
}

// skipOrEnter reads a member's value: a container is entered (its members
// are walked by the caller's loop), a scalar is consumed.
func skipOrEnter(dec *json.Decoder, inObject, objects *[]bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		*inObject, *objects = append(*inObject, true), append(*objects, false)
	case json.Delim('['):
		*inObject, *objects = append(*inObject, false), append(*objects, false)
	}
	return nil
}
