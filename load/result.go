package load

import (
	"encoding/json"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// SchemaVersion is the version of the JSON document written by `ceiling load
// --json`. Bump it when a field changes meaning or is removed; adding a field
// does not need a bump. 2: a scenario's own knobs moved under
// config.params (fanout's app_id, key, channels, publishers; echo's
// eager_reads, io).
const SchemaVersion = 2

// Result is the whole JSON document of one `ceiling load` run. The harness
// reads it back (see harness), so every field name here is a contract: snake
// case, units in the name, and both the requested and the achieved value
// where the two can differ.
type Result struct {
	SchemaVersion int            `json:"schema_version"`
	Meta          Meta           `json:"meta"`
	Config        Config         `json:"config"`
	Summary       Summary        `json:"summary"`
	Generator     GeneratorStats `json:"generator"`
}

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

// The figures of the document that the sweep's result document carries
// too (meta, latency_ns, the generator's evidence) are defined in
// internal/wire, the package that both sides of the process boundary
// share; these are their names in the generator's API.
type (
	Meta           = wire.Meta
	Hardware       = wire.Hardware
	Latency        = wire.Latency
	GeneratorStats = wire.GeneratorStats
	LoopStats      = wire.LoopStats
	ThreadStats    = wire.ThreadStats
	SelfMemory     = wire.GeneratorMemory
)

// DelayFraction is run delay as a fraction of the runnable time (ran or
// waited to run); 0 when the thread never was runnable. ThreadStats'
// fractions are this.
func DelayFraction(run, delay int64) float64 {
	if run+delay <= 0 {
		return 0
	}
	return float64(delay) / float64(run+delay)
}
