package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Summary is what the run measured inside its window (warm-up excluded).
type Summary struct {
	Scenario string `json:"scenario"` // the scenario's registered name
	Mode     string `json:"mode"`     // closed | open

	// What was asked for (open loop only; null in closed loop), what was
	// attempted and what succeeded, in operations per second of the
	// window. An operation is one batch (echo: succeeded when every reply
	// came back) or one publish request (fanout: succeeded when the server
	// accepted it, a 2xx without an error in its body). Achieved counts
	// successes only: an overloaded server that times out most requests
	// shows attempted at the requested rate and achieved far below it.
	RequestedOpsPerS *float64 `json:"requested_ops_per_s"`
	AttemptedOpsPerS float64  `json:"attempted_ops_per_s"`
	AchievedOpsPerS  float64  `json:"achieved_ops_per_s"`

	// ThroughputPerS counts messages the server handled per second of the
	// measured window: for echo, messages echoed back; for fanout,
	// deliveries to subscribers.
	ThroughputPerS float64 `json:"throughput_per_s"`
	BytesPerS      float64 `json:"bytes_per_s"` // payload bytes of those messages
	Messages       int64   `json:"messages"`
	MeasuredNs     int64   `json:"measured_ns"` // actual length of the window

	// Errors counts failed operations (and failed connections); a
	// throughput taken with errors is a measurement of the failure.
	Errors         int64            `json:"errors"`
	ErrorsByReason map[string]int64 `json:"errors_by_reason"`
	// Failure says why the run could not measure (preflight failed, no
	// connection opened, interrupted); empty when it ran its window.
	Failure string `json:"failure,omitempty"`
	// Refused says the failure was a preflight refusal that every point
	// would meet again (load.Refused): a sweep stops there.
	Refused bool `json:"refused,omitempty"`
	// Dropped counts connections lost during the window, Reconnects the
	// ones re-established. Null where the scenario counts a lost
	// connection in errors instead.
	Dropped    *int64 `json:"dropped"`
	Reconnects *int64 `json:"reconnects"`

	// Saturated is true when the open loop hit --max-inflight: the
	// requested rate was not met and the report says so.
	Saturated       bool   `json:"saturated"`
	SaturatedReason string `json:"saturated_reason,omitempty"`

	ConnectionsRequested int `json:"connections_requested"`
	ConnectionsOpen      int `json:"connections_open"`

	Latency Latency `json:"latency_ns"`

	// Drop is what --drop found: whether the server stayed up and served
	// a new client after every connection vanished at once.
	Drop *DropResult `json:"drop,omitempty"`

	// Timeline is the replies completed per tick from the window's open,
	// warm-up included (scenarios that keep one: echo); nil otherwise.
	Timeline *Timeline `json:"timeline,omitempty"`

	// Blocks are the scenario's own parts of the summary, each written
	// inline under its key (summary.fanout, summary.kinds): see SetBlock.
	Blocks map[string]json.RawMessage `json:"-"`
}

// SetBlock stores v (marshalled now) as the scenario's summary block under
// key, written inline in the summary: summary.<key>. A key that is one of
// the common summary fields panics: that is a scenario's programming error.
func (s *Summary) SetBlock(key string, v any) error {
	if summaryFields()[key] {
		panic("wire: summary block " + key + " collides with a common summary field")
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

// ServerShares are the "servers" of the first block (by key) that lists
// them; nil when none does.
func (s *Summary) ServerShares() []ServerShare { return SharesOf(s.Blocks) }

// SplitAtNs is where the block that lists the servers split their
// accounting into Before and After (a scenario's load.FaultDef), from the
// window's start; 0 when not split.
func (s *Summary) SplitAtNs() int64 { return SplitAtOf(s.Blocks) }
