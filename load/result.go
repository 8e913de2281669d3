package load

import (
	"encoding/json"
	"reflect"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// SchemaVersion is the version of the JSON document written by `ceiling load
// --json`. Bump it when a field changes meaning or is removed; adding a field
// does not need a bump. 2: a scenario's own knobs moved under
// config.params (fanout's app_id, key, channels, publishers; echo's
// eager_reads, io).
const SchemaVersion = 2

// The document of one `ceiling load` run, and the figures the sweep's
// result document carries too (meta, latency_ns, the generator's
// evidence), are defined in internal/wire, the package that both sides of
// the process boundary share, so that what judges them (the harness's
// verdict) links no generator; these are their names in the generator's
// API. Result.Config is the config as the document records it
// (RecordedConfig: the scenario's params as JSON); Config.Record makes it.
type (
	Result         = wire.Result
	RecordedConfig = wire.Config
	Summary        = wire.Summary
	Timeline       = wire.Timeline
	Meta           = wire.Meta
	Hardware       = wire.Hardware
	Latency        = wire.Latency
	GeneratorStats = wire.GeneratorStats
	LoopStats      = wire.LoopStats
	ThreadStats    = wire.ThreadStats
	SelfMemory     = wire.GeneratorMemory
)

// TimelineTick is a timeline's tick (wire.TimelineTick).
const TimelineTick = wire.TimelineTick

// NewTimeline is an empty timeline over w, to Drain.
func NewTimeline(w Window) *Timeline { return wire.NewTimeline(w.Open, w.Start, w.End, w.Drain) }

// InlineBlocks returns the JSON object obj with every block added as a
// member under its key, in key order (wire.InlineBlocks).
func InlineBlocks(obj []byte, blocks map[string]json.RawMessage) []byte {
	return wire.InlineBlocks(obj, blocks)
}

// JSONFieldNames are the JSON member names of a struct type's fields
// (wire.JSONFieldNames).
func JSONFieldNames(t reflect.Type) map[string]bool { return wire.JSONFieldNames(t) }

// DelayFraction is run delay as a fraction of the runnable time (ran or
// waited to run); 0 when the thread never was runnable. ThreadStats'
// fractions are this.
func DelayFraction(run, delay int64) float64 {
	if run+delay <= 0 {
		return 0
	}
	return float64(delay) / float64(run+delay)
}
