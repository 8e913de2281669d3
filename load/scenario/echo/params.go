// Package echo is the echo scenario: a server that sends every message
// back (RFC 6455 data frames, any path). An operation is one batch of
// --batch frames written with one syscall; the closed loop waits for the
// whole batch to come back, the open loop (--rate) sends on schedule and
// times every reply from its scheduled time.
//
// It registers itself with load.Register; import it (or
// load/scenario/all) for `--scenario echo`.
package echo

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// Name is the scenario's registered name.
const Name = "echo"

// DefaultURL is refserver's echo endpoint on its default port.
const DefaultURL = "ws://127.0.0.1:6001/echo"

// I/O modes: how the connections are driven, closed and open loop.
const (
	IOLoop       = "loop"       // event loops, one per GOMAXPROCS (load/evloop)
	IOGoroutines = "goroutines" // one goroutine per connection (two in the open loop)
	// IOReactor is the former name of IOLoop, still accepted.
	IOReactor = "reactor"
	// DefaultIO is the I/O mode where the engine is supported (see
	// docs/efficiency.md for the A/B).
	DefaultIO = IOLoop
)

func init() {
	load.Register(load.Definition{
		Name:       Name,
		Help:       "a server that sends every message back",
		DefaultURL: DefaultURL,
		NewParams:  func() load.Params { return &Params{IO: DefaultIO} },
		Target: &load.TargetDef{
			Key:   "echo_url",
			Parse: parseTarget,
			FromURL: func(u string) json.RawMessage {
				b, _ := json.Marshal(u)
				return b
			},
		},
	})
}

// Params are echo's own knobs.
type Params struct {
	// EagerReads turns off batched reads in the closed loop: by default
	// the reader asks the kernel to wake it once a whole batch is back
	// (SO_RCVLOWAT), which halves the generator's CPU per message but
	// times every message of a batch at the batch's completion.
	EagerReads bool `json:"eager_reads"`
	// IO is how the connections are driven: "loop" (one epoll event loop
	// per GOMAXPROCS, Linux only; see load/evloop) or "goroutines" (one
	// per connection, Go's netpoller). "reactor" is read as "loop". The
	// result records the mode that ran.
	IO string `json:"io"`
	// BusyPoll keeps the event loops polling instead of parking (a
	// measurement factor: see evloop.Config.BusyPoll).
	BusyPoll bool `json:"busy_poll,omitempty"`
}

// Flags binds --eager-reads and --io.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&p.EagerReads, "eager-reads", p.EagerReads, "closed loop: read each reply as it arrives (per-message latency) instead of waking once per batch (less generator CPU)")
	fs.BoolVar(&p.BusyPoll, "busy-poll", p.BusyPoll, "--io loop: the loops never park, so the server never has to wake the client: a measurement of what waking costs a server on loopback (docs/efficiency.md), at a whole generator core; the loops then read busy all window")
	fs.Var(&ioValue{&p.IO}, "io", "`mode`: loop (event loops, one per GOMAXPROCS, Linux; reactor is an alias) | goroutines (one per connection)")
}

// Validate refuses knobs the run would not read, and records the I/O mode
// that actually runs.
func (p *Params) Validate(c *load.Config, given func(string) bool) error {
	if given("eager-reads") && c.OpenLoop() {
		return errors.New("--eager-reads is only read by the closed loop of --scenario echo (the open loop always reads eagerly)")
	}
	switch p.IO {
	case "":
		p.IO = DefaultIO // Params built by hand
	case IOReactor:
		p.IO = IOLoop
	case IOLoop, IOGoroutines:
	default:
		return fmt.Errorf("--io %q: want loop or goroutines", p.IO)
	}
	if p.IO == IOLoop && c.Drop {
		if given("io") {
			return errors.New("--drop needs --io goroutines: the event loops own their sockets and close them themselves")
		}
		p.IO = IOGoroutines
	}
	if p.BusyPoll && p.IO != IOLoop {
		return errors.New("--busy-poll needs --io loop: only the event loops poll")
	}
	if p.IO == IOLoop && !evloop.Supported {
		if given("io") {
			return errors.New("--io loop needs Linux (epoll): use --io goroutines")
		}
		p.IO = IOGoroutines
	}
	return nil
}

// New builds the driver.
func (p *Params) New(c *load.Config, pool *payload.Pool) (load.Scenario, error) {
	return newEcho(c, p, pool), nil
}

// Driver is echo's driver, for a scenario that drives an echo server
// its own way (load/scenario/connections): it embeds one, so it keeps
// every interface the engine asks of echo's (the loops' evidence, the
// I/O pattern, the drop), and adds its own part.
type Driver = echo

// NewDriver builds echo's driver for c, whose Params are another
// scenario's: p are the echo knobs that scenario fixed.
func NewDriver(c *load.Config, p *Params, pool *payload.Pool) *Driver { return newEcho(c, p, pool) }

type ioValue struct{ s *string }

func (v *ioValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

func (v *ioValue) Set(s string) error {
	if s != IOLoop && s != IOReactor && s != IOGoroutines {
		return fmt.Errorf("want loop or goroutines")
	}
	*v.s = s
	return nil
}

// target is echo's block of a target file: "echo_url": "ws://{addr}/echo".
type target string

func parseTarget(raw json.RawMessage) (load.TargetBlock, error) {
	var u string
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, fmt.Errorf("want a string URL: %w", err)
	}
	return target(u), nil
}

func (t target) URL() string                { return string(t) }
func (t target) URLField() string           { return "echo_url" }
func (t target) Args() []string             { return nil }
func (t target) Secrets() map[string]string { return nil }
func (t target) CheckLadder(int) error      { return nil }
