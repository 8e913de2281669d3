package load

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// Connect strategy names.
const (
	ConnectBounded   = "bounded"
	ConnectStagger   = "stagger"
	ConnectAllAtOnce = "all-at-once"
)

// Defaults of every knob (the CLI shows them in -h).
const (
	DefaultScenario           = "echo"
	DefaultConnections        = 16
	DefaultBatch              = 1
	DefaultRecordSize         = 256
	DefaultDuration           = 10 * time.Second
	DefaultWarmup             = 2 * time.Second
	DefaultMaxInflight        = 1000
	DefaultPayloadSeed        = 1
	DefaultConnectConcurrency = 32
	DefaultConnectStaggerMs   = 10
	// MaxRecordSize bounds one value (and with --batch, one write).
	MaxRecordSize = wire.MaxRecordSize
	// MaxBatchBytes bounds --batch x --record-size: one write (echo) or
	// one publish body's events (fanout).
	MaxBatchBytes = 64 << 20
	// NoFileSpare is the file descriptors the generator needs beside one
	// socket per connection: stdio, epoll and timer descriptors, the JSON
	// and marker files, a publisher's or probe's few sockets.
	NoFileSpare = 64
	// Drain is how long operations in flight at the window's end (and
	// deliveries of messages sent inside it) are awaited.
	Drain = 2 * time.Second
)

// DefaultConfig is the configuration with every default filled in; URL is
// left empty and chosen by the scenario in Validate, and Params are the
// scenario's defaults, made in Validate when nil.
func DefaultConfig() Config {
	return Config{
		Scenario:           DefaultScenario,
		Connections:        DefaultConnections,
		Batch:              DefaultBatch,
		RecordSize:         DefaultRecordSize,
		DurationNs:         int64(DefaultDuration),
		WarmupNs:           int64(DefaultWarmup),
		MaxInflight:        DefaultMaxInflight,
		Payload:            payload.Constant,
		PayloadSeed:        DefaultPayloadSeed,
		ConnectStrategy:    ConnectBounded,
		ConnectConcurrency: DefaultConnectConcurrency,
		ConnectStaggerMs:   DefaultConnectStaggerMs,
	}
}

// Validate checks every knob and fills the scenario's default URL. given
// reports whether a flag was set explicitly (nil: none was); knobs that
// only one strategy, mode or scenario reads are refused without it, so a
// typo'd combination never runs silently with the knob ignored. Errors
// name the flag.
func (c *Config) Validate(given func(flag string) bool) error {
	if given == nil {
		given = func(string) bool { return false }
	}
	if err := c.validateScenarioURLs(); err != nil {
		return err
	}
	if err := c.validateLoad(given); err != nil {
		return err
	}
	if err := c.validateConnect(given); err != nil {
		return err
	}
	if err := c.validatePaths(); err != nil {
		return err
	}
	return c.Params.Validate(c, given)
}

// validateScenarioURLs looks the scenario up, fills its default params
// and URL, and checks every --url against what the scenario drives.
func (c *Config) validateScenarioURLs() error {
	d, err := lookupScenario(c.Scenario)
	if err != nil {
		return err
	}
	if c.Params == nil {
		c.Params = d.NewParams()
	}
	if c.URL == "" {
		if d.DefaultURL == "" {
			return fmt.Errorf("--url: --scenario %s has no default URL: give one", c.Scenario)
		}
		c.URL = d.DefaultURL
	}
	if len(c.URLs) > 0 && c.URLs[0] != c.URL {
		return fmt.Errorf("--url: the first of %v is not %q", c.URLs, c.URL)
	}
	multi, _ := c.Params.(MultiServer)
	if len(c.URLs) > 1 && (multi == nil || !multi.MultiServer()) {
		return fmt.Errorf("--url given %d times: --scenario %s drives one server", len(c.URLs), c.Scenario)
	}
	wss := multi != nil && multi.MultiServer()
	for _, s := range append([]string{c.URL}, c.URLs...) {
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("--url %q: %w", s, err)
		}
		if (u.Scheme != "ws" && !(wss && u.Scheme == "wss")) || u.Host == "" {
			if wss {
				return fmt.Errorf("--url %q: want ws:// or wss://host:port/path", s)
			}
			return fmt.Errorf("--url %q: want ws://host:port/path (wss is not supported)", s)
		}
	}
	return nil
}

// validateLoad checks the knobs that shape the load: connections, batch,
// record size, duration, warm-up, rate, in-flight cap, payload and drop.
func (c *Config) validateLoad(given func(flag string) bool) error {
	if c.Connections < 1 {
		return fmt.Errorf("--connections %d: must be at least 1", c.Connections)
	}
	if c.Batch < 1 {
		return fmt.Errorf("--batch %d: must be at least 1", c.Batch)
	}
	if c.RecordSize < 1 || c.RecordSize > MaxRecordSize {
		return fmt.Errorf("--record-size %d: must be between 1 and %d", c.RecordSize, MaxRecordSize)
	}
	if int64(c.Batch)*int64(c.RecordSize) > MaxBatchBytes {
		return fmt.Errorf("--batch %d x --record-size %d is over 64 MiB per write", c.Batch, c.RecordSize)
	}
	if c.DurationNs <= 0 {
		return fmt.Errorf("--duration %v: must be positive", time.Duration(c.DurationNs))
	}
	if c.WarmupNs < 0 {
		return fmt.Errorf("--warmup %v: must not be negative", time.Duration(c.WarmupNs))
	}
	if !(c.Rate >= 0) || math.IsInf(c.Rate, 1) { // NaN fails >= too
		return fmt.Errorf("--rate %g: must be a finite number, not negative (0 is the closed loop)", c.Rate)
	}
	if c.Rate == 0 && given("max-inflight") {
		return fmt.Errorf("--max-inflight is only read by the open loop: give --rate too")
	}
	if c.MaxInflight < 1 {
		return fmt.Errorf("--max-inflight %d: must be at least 1", c.MaxInflight)
	}
	if err := payload.Validate(c.Payload, c.RecordSize); err != nil {
		return err
	}
	if given("drop-probe") && !c.Drop {
		return fmt.Errorf("--drop-probe is only read with --drop")
	}
	if err := validateDropProbe(c.DropProbe); err != nil {
		return err
	}
	if c.Payload == payload.Constant && given("payload-seed") {
		return fmt.Errorf("--payload-seed is only read by --payload json or random")
	}
	return nil
}

// validateConnect checks the connect strategy, the knobs only one
// strategy reads, and the source addresses.
func (c *Config) validateConnect(given func(flag string) bool) error {
	switch c.ConnectStrategy {
	case ConnectBounded, ConnectStagger, ConnectAllAtOnce:
	default:
		return fmt.Errorf("--connect-strategy %q: want bounded, stagger or all-at-once", c.ConnectStrategy)
	}
	if given("connect-concurrency") && c.ConnectStrategy != ConnectBounded {
		return fmt.Errorf("--connect-concurrency is only read by --connect-strategy bounded (got %s)", c.ConnectStrategy)
	}
	if given("connect-stagger-ms") && c.ConnectStrategy != ConnectStagger {
		return fmt.Errorf("--connect-stagger-ms is only read by --connect-strategy stagger (got %s)", c.ConnectStrategy)
	}
	if c.ConnectConcurrency < 1 {
		return fmt.Errorf("--connect-concurrency %d: must be at least 1", c.ConnectConcurrency)
	}
	if c.ConnectStaggerMs < 0 {
		return fmt.Errorf("--connect-stagger-ms %d: must not be negative", c.ConnectStaggerMs)
	}
	if _, _, err := ParseSourceAddrs(c.SourceAddrs); err != nil {
		return err
	}
	return nil
}

// validatePaths checks that every output or signal file's directory
// exists, so a run does not end unwritten.
func (c *Config) validatePaths() error {
	for _, f := range []struct{ flag, path string }{{"--json", c.JSONPath}, {"--measure-marker", c.MeasureMarker}, {"--start-gate", c.StartGate}} {
		if f.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(f.path)); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s: its directory does not exist", f.flag, f.path)
		}
	}
	return nil
}

// OpenLoop reports whether the run is paced by --rate.
func (c *Config) OpenLoop() bool { return c.Rate > 0 }
