package load

import (
	"encoding/json"
	"fmt"
)

// Config is every knob of `ceiling load`. The CLI fills it from one
// flag.FlagSet (see cmd/ceiling); Validate must pass before any connection
// opens. It is recorded verbatim in the result.
type Config struct {
	Scenario string `json:"scenario"` // a registered scenario (load.Scenarios)
	URL      string `json:"url"`      // ws://host:port/path; the scenario may add to it (fanout: the app path)
	// URLs are every --url when it was given more than once (URL is the
	// first): connection i goes to URLs[i mod len]. Only a scenario whose
	// Params are a MultiServer takes more than one.
	URLs []string `json:"urls,omitempty"`

	Connections int   `json:"connections"`
	Batch       int   `json:"batch"`
	RecordSize  int   `json:"record_size"` // bytes per message payload
	DurationNs  int64 `json:"duration_ns"`
	WarmupNs    int64 `json:"warmup_ns"`

	// Rate > 0 is an open loop at that many operations per second in
	// total; 0 is a closed loop.
	Rate        float64 `json:"rate"`
	MaxInflight int     `json:"max_inflight"` // per connection, open loop

	Payload     string `json:"payload"` // constant | json | random
	PayloadSeed uint32 `json:"payload_seed"`

	ConnectStrategy    string `json:"connect_strategy"` // bounded | stagger | all-at-once
	ConnectConcurrency int    `json:"connect_concurrency"`
	ConnectStaggerMs   int    `json:"connect_stagger_ms"`

	// SourceAddrs is --source-addrs: the local addresses connections
	// spread over ("" is auto; see source.go).
	SourceAddrs string `json:"source_addrs,omitempty"`

	// Params are the scenario's own knobs (its flags), recorded under
	// config.params; see Definition.
	Params Params `json:"params,omitempty"`

	// Drop: after the window every connection is dropped at once, with no
	// close handshake, and DropProbe (the server's ready probe) is timed
	// (summary.drop; see drop.go).
	Drop      bool   `json:"drop,omitempty"`
	DropProbe string `json:"drop_probe,omitempty"`

	MeasureMarker string `json:"measure_marker,omitempty"`
	// StartGate: the load starts when a coordinator opens this gate
	// (gate.go), not as soon as every connection is open.
	StartGate string `json:"start_gate,omitempty"`
	JSONPath  string `json:"-"`
}

// UnmarshalJSON reads a recorded config back, decoding params into the
// registered scenario's Params type (kept out when the scenario is not
// registered in this binary).
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var aux struct {
		plain
		Params json.RawMessage `json:"params,omitempty"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*c = Config(aux.plain)
	c.Params = nil
	if d, ok := Lookup(c.Scenario); ok && len(aux.Params) > 0 && string(aux.Params) != "null" {
		p := d.NewParams()
		if err := json.Unmarshal(aux.Params, p); err != nil {
			return fmt.Errorf("config.params (%s): %w", c.Scenario, err)
		}
		c.Params = p
	}
	return nil
}

// MultiServer is Params of a scenario that drives several servers at once
// (repeated --url, connection i to server i mod N) and speaks wss:// as
// well as ws://.
type MultiServer interface {
	MultiServer() bool
}

// Record is c as the run's document records it (Result.Config): every
// field but JSONPath, and the scenario's params as they marshal.
func (c *Config) Record() (RecordedConfig, error) {
	var rc RecordedConfig
	b, err := json.Marshal(c)
	if err != nil {
		return rc, fmt.Errorf("config: %w", err)
	}
	err = json.Unmarshal(b, &rc)
	return rc, err
}
