package wire

import (
	"encoding/json"
	"fmt"
	"slices"
)

// ServerShare is one server's share of a run over several (--url given
// more than once), as a scenario's summary block lists it under
// "servers": the clients it held and lost, the publishes sent through it
// and the deliveries its clients were owed and received (fanout; nats
// gives the URL and connections). The harness reads it without knowing
// the scenario (SharesOf; load.Summary.ServerShares).
type ServerShare struct {
	URL         string `json:"url"`
	Connections int    `json:"connections"`
	// Dropped are clients that lost their connection inside the window.
	Dropped         int64 `json:"dropped"`
	Publishes       int64 `json:"publishes"` // requests this server accepted
	PublishFailures int64 `json:"publish_failures"`
	Delivery
	// Before and After split Delivery at the block's split time by each
	// event's publish time (fanout --split-at only).
	Before *Delivery `json:"before,omitempty"`
	After  *Delivery `json:"after,omitempty"`
}

// Delivery is deliveries owed and received. DeliveredPct is
// 100 * min(Delivered, Expected) / Expected; null when nothing was owed.
type Delivery struct {
	Expected     int64    `json:"expected"`
	Delivered    int64    `json:"delivered"`
	DeliveredPct *float64 `json:"delivered_pct"`
}

// SetPct sets DeliveredPct from the counts.
func (d *Delivery) SetPct() {
	d.DeliveredPct = nil
	if d.Expected > 0 {
		pct := 100 * float64(min(d.Delivered, d.Expected)) / float64(d.Expected)
		d.DeliveredPct = &pct
	}
}

// PctText is DeliveredPct for a person: "99.95%", or "none owed".
func (d Delivery) PctText() string {
	if d.DeliveredPct == nil {
		return "none owed"
	}
	return fmt.Sprintf("%.2f%%", *d.DeliveredPct)
}

// SharesOf is ServerShares of a summary's blocks (a sweep point's
// "scenario").
func SharesOf(blocks map[string]json.RawMessage) []ServerShare { return serversOf(blocks).Servers }

// SplitAtOf is where the block that lists the servers (SharesOf) split
// their accounting into Before and After, in nanoseconds from the
// window's start, as it says under "split_at_ns"; 0 when not split.
func SplitAtOf(blocks map[string]json.RawMessage) int64 { return serversOf(blocks).SplitAtNs }

// DuplicatesOf is the deliveries beyond those owed, as the block that
// lists the servers (SharesOf) counts them under "duplicates": an event
// delivered twice, or one whose publish was counted as failed; 0 when it
// says none.
func DuplicatesOf(blocks map[string]json.RawMessage) int64 { return serversOf(blocks).Duplicates }

// serversBlock is what a scenario's summary block that lists servers
// holds beside its own figures.
type serversBlock struct {
	Servers    []ServerShare `json:"servers"`
	SplitAtNs  int64         `json:"split_at_ns"`
	Duplicates int64         `json:"duplicates"`
}

// serversOf is the first block (by key) that lists servers.
func serversOf(blocks map[string]json.RawMessage) serversBlock {
	keys := make([]string, 0, len(blocks))
	for k := range blocks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var b serversBlock
		if json.Unmarshal(blocks[k], &b) == nil && len(b.Servers) > 0 {
			return b
		}
	}
	return serversBlock{}
}
