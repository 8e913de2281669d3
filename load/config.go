package load

// Config is every knob of `ceiling load`. The CLI fills it from one
// flag.FlagSet (see cmd/ceiling); Validate must pass before any connection
// opens. It is recorded verbatim in the result.
type Config struct {
	Scenario string `json:"scenario"` // echo | fanout
	URL      string `json:"url"`      // ws://host:port/path (echo) or ws://host:port (fanout; the app path is added)

	// Pusher credentials (fanout only).
	AppID  string `json:"app_id"`
	Key    string `json:"key"`
	Secret string `json:"-"` // never recorded
	// Channels the subscribers are spread over, evenly (fanout only).
	Channels int `json:"channels"`
	// Publishers is the number of concurrent REST publishers (fanout only).
	Publishers int `json:"publishers"`

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

	// EagerReads turns off batched reads in the closed echo loop: by
	// default the reader asks the kernel to wake it once a whole batch is
	// back (SO_RCVLOWAT), which halves the generator's CPU per message but
	// times every message of a batch at the batch's completion.
	EagerReads bool `json:"eager_reads"`

	// IO is how the closed echo loop drives its connections: "goroutines"
	// (one per connection, Go's netpoller) or "reactor" (one epoll loop
	// per GOMAXPROCS, Linux only; see load/reactor).
	IO string `json:"io"`

	MeasureMarker string `json:"measure_marker,omitempty"`
	JSONPath      string `json:"-"`
}
