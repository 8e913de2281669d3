package load

import (
	"encoding/json"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// ServerShare is one server's share of a run over several, and Delivery
// deliveries owed and received (defined in internal/wire: the sweep's
// points carry them too).
type (
	ServerShare = wire.ServerShare
	Delivery    = wire.Delivery
)

// ServerShares are the "servers" of the first block (by key) that lists
// them; nil when none does.
func (s *Summary) ServerShares() []ServerShare { return SharesOf(s.Blocks) }

// SplitAtNs is where the block that lists the servers split their
// accounting into Before and After (a scenario's FaultDef), from the
// window's start; 0 when not split.
func (s *Summary) SplitAtNs() int64 { return wire.SplitAtOf(s.Blocks) }

// SharesOf is ServerShares of a summary's blocks (a sweep point's
// "scenario").
func SharesOf(blocks map[string]json.RawMessage) []ServerShare { return wire.SharesOf(blocks) }
