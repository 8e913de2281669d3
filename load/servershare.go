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

// SharesOf is ServerShares of a summary's blocks (a sweep point's
// "scenario").
func SharesOf(blocks map[string]json.RawMessage) []ServerShare { return wire.SharesOf(blocks) }
