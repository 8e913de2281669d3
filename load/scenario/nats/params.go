// Package nats drives a NATS JetStream broker over its WebSocket listener
// through the official client (github.com/nats-io/nats.go and its
// jetstream package). It registers four scenarios, one per way of using
// a broker, sharing one target block ("nats") and one summary block
// (summary.nats):
//
//   - produce: JetStream publishes, --batch in flight per connection,
//     each awaited; latency is publish -> ack.
//   - fetch: a pull consumer per connection reads a stream seeded with
//     --prepopulate records, --max per fetch; latency is the fetch round
//     trip (one sample per fetch).
//   - stream: a consumer per connection, the server pushing within a
//     credit of --window messages; the same connection publishes; latency
//     is end to end, from the publish time in a header to delivery. A lost
//     connection is counted in dropped and reconnects, and the client
//     reconnects and resumes.
//   - mixed: produce and fetch interleaved on the same connections: a
//     --batch of publishes awaited, then one --max fetch.
//
// Four registered names, not one scenario with a mode flag: the harness
// picks the scenario by its name (SCENARIO), so `make ceiling
// SCENARIO=produce TARGET=benchmark/targets/nats.json` sweeps it with one
// target file for all four, and the mode is never a flag a target block
// has to carry.
//
// Sequences are checked: acks on a connection must rise, and at the end
// the acks of the run must account for every sequence of the stream
// (produce, mixed); fetched records must come in stream order with no gap
// (fetch, mixed); streamed records must come with no gap in the
// consumer's own sequence. A gap is an error by its reason.
package nats

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// BlockKey is the key of the target block and of the summary block.
const BlockKey = "nats"

// The four scenarios' names (modes).
const (
	Produce = "produce"
	Fetch   = "fetch"
	Stream  = "stream"
	Mixed   = "mixed"
)

// Modes lists them in order.
var Modes = []string{Produce, Fetch, Stream, Mixed}

// Defaults.
const (
	DefaultURL         = "ws://127.0.0.1:8080"
	DefaultKeys        = 1
	DefaultPrepopulate = 50000
	DefaultMax         = 0 // --batch: the sweep's batch ladder is the fetch size
	DefaultWindow      = 1000
	DefaultStream      = "CEILING"
	DefaultStorage     = "file"
)

var help = map[string]string{
	Produce: "NATS JetStream over WebSocket: publishes with acks, --batch in flight per connection",
	Fetch:   "NATS JetStream over WebSocket: pull consumers fetching --max batches from a --prepopulate backlog",
	Stream:  "NATS JetStream over WebSocket: server-pushed delivery within a --window credit, end-to-end latency",
	Mixed:   "NATS JetStream over WebSocket: produce and fetch interleaved on the same connections",
}

func init() {
	for _, mode := range Modes {
		load.Register(load.Definition{
			Name:       mode,
			Help:       help[mode],
			DefaultURL: DefaultURL,
			NewParams: func() load.Params {
				return &Params{Mode: mode, Keys: DefaultKeys, Prepopulate: DefaultPrepopulate, Max: DefaultMax, Window: DefaultWindow, Stream: DefaultStream, Storage: DefaultStorage}
			},
			Report: report,
			Target: &load.TargetDef{Key: BlockKey, Parse: parseTarget},
		})
	}
}

// Params are the NATS scenarios' knobs. Mode is the registered name, not
// a flag.
type Params struct {
	Mode        string `json:"mode"`
	Keys        int    `json:"keys"`
	Prepopulate int    `json:"prepopulate"`
	Max         int    `json:"max"`
	Window      int    `json:"window"`
	Stream      string `json:"stream"`
	Storage     string `json:"storage"`
	// CAFile verifies a wss:// server against this PEM bundle instead of
	// the system's roots; Insecure skips verification.
	CAFile   string `json:"ca_file,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
}

// Flags binds --keys, --prepopulate, --max, --window, --stream and
// --storage.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.IntVar(&p.Keys, "keys", p.Keys, "subjects the records are spread over (key cardinality)")
	fs.IntVar(&p.Prepopulate, "prepopulate", p.Prepopulate, "fetch, mixed: records seeded into the stream before the window opens")
	fs.IntVar(&p.Max, "max", p.Max, "fetch, mixed: records per fetch (0: --batch)")
	fs.IntVar(&p.Window, "window", p.Window, "stream: the consumer's credit (max ack pending, and messages per pull)")
	fs.StringVar(&p.Stream, "stream", p.Stream, "JetStream stream name (deleted and made anew by the run)")
	fs.StringVar(&p.Storage, "storage", p.Storage, "stream storage: file or memory")
	fs.StringVar(&p.CAFile, "ca-file", p.CAFile, "wss://: verify the servers against this PEM CA bundle")
	fs.BoolVar(&p.Insecure, "insecure", p.Insecure, "wss://: do not verify the servers' certificates")
}

// Validate checks the knobs; errors name the flag.
func (p *Params) Validate(c *load.Config, given func(string) bool) error {
	if p.Keys < 1 {
		return fmt.Errorf("--keys %d: must be at least 1", p.Keys)
	}
	if p.Prepopulate < 0 {
		return fmt.Errorf("--prepopulate %d: must not be negative", p.Prepopulate)
	}
	if p.Max < 0 {
		return fmt.Errorf("--max %d: must not be negative (0 is --batch)", p.Max)
	}
	if p.Window < 1 {
		return fmt.Errorf("--window %d: must be at least 1", p.Window)
	}
	if p.Stream == "" || strings.ContainsAny(p.Stream, " \t\r\n.*>/\\") {
		return fmt.Errorf("--stream %q: a stream name without spaces, '.', '*', '>', '/' or '\\'", p.Stream)
	}
	if p.Storage != "file" && p.Storage != "memory" {
		return fmt.Errorf("--storage %q: want file or memory", p.Storage)
	}
	switch p.Mode {
	case Fetch, Mixed:
		if p.Prepopulate < 1 {
			return fmt.Errorf("--prepopulate %d: --scenario %s reads a seeded backlog, give at least 1", p.Prepopulate, p.Mode)
		}
	}
	if p.Mode != Stream && given("window") {
		return fmt.Errorf("--window is only read by --scenario stream")
	}
	if (p.Mode == Produce || p.Mode == Stream) && (given("max") || given("prepopulate")) {
		return fmt.Errorf("--max and --prepopulate are only read by --scenario fetch and mixed")
	}
	if p.Max == 0 && (p.Mode == Fetch || p.Mode == Mixed) {
		p.Max = c.Batch // recorded in config.params as the size used
	}
	wss := false
	for _, u := range append([]string{c.URL}, c.URLs...) {
		wss = wss || strings.HasPrefix(u, "wss://")
	}
	if (p.CAFile != "" || p.Insecure) && !wss {
		return fmt.Errorf("--ca-file and --insecure are only read with a wss:// --url")
	}
	if p.CAFile != "" && p.Insecure {
		return fmt.Errorf("--ca-file with --insecure: verify against the CA file, or not at all")
	}
	if p.CAFile != "" {
		if _, err := os.ReadFile(p.CAFile); err != nil {
			return fmt.Errorf("--ca-file %s: %w", p.CAFile, err)
		}
	}
	if c.OpenLoop() {
		return fmt.Errorf("--rate: --scenario %s is a closed loop (--batch in flight per connection)", p.Mode)
	}
	return nil
}

// MultiServer: repeated --url (connection i to server i mod N), and
// wss:// as well as ws://.
func (p *Params) MultiServer() bool { return true }

// New builds the driver.
func (p *Params) New(c *load.Config, pool *payload.Pool) (load.Scenario, error) {
	return newDriver(c, p, pool), nil
}

// Summary is summary.nats: per-mode figures. Null fields belong to other
// modes.
type Summary struct {
	Mode   string `json:"mode"`
	Stream string `json:"stream"`
	Keys   int    `json:"keys"`

	// produce, stream, mixed: publishes in the window and their acks.
	Published      int64         `json:"published"`
	Acked          int64         `json:"acked"`
	AckLatency     *load.Latency `json:"ack_latency_ns,omitempty"`
	AckedTotal     int64         `json:"acked_total"`     // every ack of the run, warm-up and seed included
	StreamLastSeq  uint64        `json:"stream_last_seq"` // the stream's last sequence after the run
	StreamMessages uint64        `json:"stream_messages"` // messages the stream holds after the run
	SequenceCheck  string        `json:"sequence_check"`  // "continuous", or what was wrong
	Prepopulated   int64         `json:"prepopulated"`    // fetch, mixed
	Fetches        int64         `json:"fetches"`         // fetch, mixed: in the window
	Fetched        int64         `json:"fetched"`         // records those fetches returned
	FetchLatency   *load.Latency `json:"fetch_latency_ns,omitempty"`
	Rewinds        int64         `json:"rewinds"`     // fetch: consumers read to the end and made anew
	Delivered      int64         `json:"delivered"`   // stream: deliveries of records published in the window
	Redelivered    int64         `json:"redelivered"` // stream: deliveries the server made again
	// LostInReconnect (stream) are publishes whose ack a disconnect took:
	// not errors, as the connection's loss is not.
	LostInReconnect int64 `json:"lost_in_reconnect"`
	Window          int   `json:"window,omitempty"` // stream
	Gaps            int64 `json:"gaps"`             // fetch_gap + stream_gap + ack gaps
	OutOfOrder      int64 `json:"out_of_order"`
	Disconnects     int64 `json:"disconnects"`
	Reconnects      int64 `json:"reconnects"`
	// Servers are the --url servers in order: the connections each held
	// and the messages counted on them (acked, fetched or delivered in
	// the window).
	Servers []ServerCount `json:"servers"`
}

// ServerCount is one server's share of a run.
type ServerCount struct {
	URL         string `json:"url"`
	Connections int    `json:"connections"`
	Messages    int64  `json:"messages"`
}

func report(res *load.Result) (warnings []string, rows []load.ReportRow) {
	var s Summary
	if ok, err := res.Summary.Block(BlockKey, &s); !ok || err != nil {
		return nil, nil
	}
	if s.Gaps > 0 || s.OutOfOrder > 0 {
		warnings = append(warnings, fmt.Sprintf("SEQUENCE: %d gaps, %d out of order (errors_by_reason says where)", s.Gaps, s.OutOfOrder))
	}
	if s.SequenceCheck != "" && s.SequenceCheck != "continuous" && s.SequenceCheck != "not checked" {
		warnings = append(warnings, "ACKS: "+s.SequenceCheck)
	}
	rows = append(rows, load.ReportRow{Name: "nats", Value: fmt.Sprintf("%s on stream %s, %d keys; stream holds %d, last seq %d, acks %s", s.Mode, s.Stream, s.Keys, s.StreamMessages, s.StreamLastSeq, s.SequenceCheck)})
	if s.AckLatency != nil {
		rows = append(rows, load.ReportRow{Name: "ack", Value: fmt.Sprintf("%d published, %d acked; %s", s.Published, s.Acked, load.LatencyLine(*s.AckLatency))})
	}
	if s.FetchLatency != nil {
		rows = append(rows, load.ReportRow{Name: "fetch", Value: fmt.Sprintf("%d fetches, %d records, %d rewinds; %s", s.Fetches, s.Fetched, s.Rewinds, load.LatencyLine(*s.FetchLatency))})
	}
	if s.Mode == Stream {
		rows = append(rows, load.ReportRow{Name: "stream", Value: fmt.Sprintf("%d delivered, %d redelivered, window %d, %d disconnects, %d reconnects, %d publishes lost in them", s.Delivered, s.Redelivered, s.Window, s.Disconnects, s.Reconnects, s.LostInReconnect)})
	}
	if len(s.Servers) > 1 {
		var parts []string
		for _, sv := range s.Servers {
			parts = append(parts, fmt.Sprintf("%s %d conns %d msgs", sv.URL, sv.Connections, sv.Messages))
		}
		rows = append(rows, load.ReportRow{Name: "servers", Value: strings.Join(parts, "; ")})
	}
	return warnings, rows
}

// Target is the "nats" block of a target file: the server's URL, or
// several servers' (a cluster), connection i to urls[i mod N].
type Target struct {
	load.ServerURLs
	Stream string `json:"stream,omitempty"`
	Keys   int    `json:"keys,omitempty"`
}

func parseTarget(raw json.RawMessage) (load.TargetBlock, error) {
	var t Target
	if err := load.DecodeStrict(raw, &t); err != nil {
		return nil, err
	}
	errs := t.ServerURLs.Check()
	if t.Keys < 0 {
		errs = append(errs, load.Fieldf("keys", "%d is negative", t.Keys))
	}
	if strings.ContainsAny(t.Stream, " \t\r\n.*>/\\") {
		errs = append(errs, load.Fieldf("stream", "%q is not a stream name", t.Stream))
	}
	return &t, errors.Join(errs...)
}

func (t *Target) URLField() string { return t.URLFieldOf("nats") }

func (t *Target) Secrets() map[string]string     { return nil }
func (t *Target) CheckLadder(minConns int) error { return nil }

// Args are a --url for each of urls but the first (the harness passes
// that one), then --stream and --keys when the block sets them.
func (t *Target) Args() []string {
	a := t.MoreURLArgs()
	if t.Stream != "" {
		a = append(a, "--stream", t.Stream)
	}
	if t.Keys > 0 {
		a = append(a, "--keys", fmt.Sprint(t.Keys))
	}
	return a
}
