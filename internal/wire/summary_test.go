package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// A scenario's block is written inline under its key and read back into
// Blocks; the common fields are untouched by it.
func TestSummaryBlocksRoundTrip(t *testing.T) {
	type kinds struct {
		Sent int `json:"sent"`
	}
	var s Summary
	s.Scenario, s.Messages = "x", 7
	if err := s.SetBlock("kinds", map[string]kinds{"op": {Sent: 3}}); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"kinds":{"op":{"sent":3}}`) || !strings.Contains(string(b), `"messages":7`) {
		t.Fatalf("marshalled: %s", b)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var got map[string]kinds
	if ok, err := back.Block("kinds", &got); !ok || err != nil || got["op"].Sent != 3 {
		t.Fatalf("Block = %v, %v, %+v", ok, err, got)
	}
	if back.Messages != 7 || len(back.Blocks) != 1 {
		t.Errorf("back: messages %d, blocks %v", back.Messages, back.Blocks)
	}
	defer func() {
		if recover() == nil {
			t.Error("a block named like a common field did not panic")
		}
	}()
	s.SetBlock("messages", 1)
}
