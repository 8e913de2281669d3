package wire

import (
	"encoding/json"
	"testing"
)

// The servers and their split come from the first block (by key) that
// lists servers; a block without any is passed over.
func TestSharesAndSplitOf(t *testing.T) {
	blocks := map[string]json.RawMessage{
		"a": json.RawMessage(`{"servers":[],"split_at_ns":7}`),
		"b": json.RawMessage(`{"servers":[{"url":"ws://x","connections":2}],"split_at_ns":1500}`),
		"c": json.RawMessage(`{"servers":[{"url":"ws://y"}],"split_at_ns":9}`),
	}
	if s := SharesOf(blocks); len(s) != 1 || s[0].URL != "ws://x" || s[0].Connections != 2 {
		t.Errorf("SharesOf = %+v, want b's one server", s)
	}
	if got := SplitAtOf(blocks); got != 1500 {
		t.Errorf("SplitAtOf = %d, want b's 1500", got)
	}
	if SharesOf(nil) != nil || SplitAtOf(nil) != 0 {
		t.Error("no blocks: want no servers and no split")
	}
}
