package wire

import "encoding/json"

// Result is the whole JSON document of one generator run (`ceiling load
// --json`, load.Result): what the generator writes and the harness reads
// back, judges and merges. Every field name here is a contract: snake
// case, units in the name, and both the requested and the achieved value
// where the two can differ.
type Result struct {
	SchemaVersion int            `json:"schema_version"`
	Meta          Meta           `json:"meta"`
	Config        Config         `json:"config"`
	Summary       Summary        `json:"summary"`
	Generator     GeneratorStats `json:"generator"`
}

// Config is the run's knobs as its document records them: load.Config's
// fields, with the scenario's own knobs (config.params) kept as the
// scenario wrote them. The generator fills it from its load.Config
// (load.Config.Record); a reader, the harness among them, needs no
// scenario to read it back. Its fields mean what load.Config's mean
// (load's TestRecordedConfigIsTheConfig keeps the two alike).
type Config struct {
	Scenario string   `json:"scenario"`
	URL      string   `json:"url"`
	URLs     []string `json:"urls,omitempty"`

	Connections int   `json:"connections"`
	Batch       int   `json:"batch"`
	RecordSize  int   `json:"record_size"`
	DurationNs  int64 `json:"duration_ns"`
	WarmupNs    int64 `json:"warmup_ns"`

	Rate        float64 `json:"rate"`
	MaxInflight int     `json:"max_inflight"`

	Payload     string `json:"payload"`
	PayloadSeed uint32 `json:"payload_seed"`

	ConnectStrategy    string `json:"connect_strategy"`
	ConnectConcurrency int    `json:"connect_concurrency"`
	ConnectStaggerMs   int    `json:"connect_stagger_ms"`

	SourceAddrs string `json:"source_addrs,omitempty"`

	// Params are the scenario's own knobs, as its Params marshalled.
	Params json.RawMessage `json:"params,omitempty"`

	Drop      bool   `json:"drop,omitempty"`
	DropProbe string `json:"drop_probe,omitempty"`

	MeasureMarker string `json:"measure_marker,omitempty"`
	StartGate     string `json:"start_gate,omitempty"`
}

// MaxRecordSize bounds one value of record_size (and with batch, one
// write): the generator's limit, which the knobs check RECORD_SIZE by.
const MaxRecordSize = 16 << 20

// OpenLoop reports whether the run was an open loop (a rate was asked).
func (c *Config) OpenLoop() bool { return c.Rate > 0 }
