// Package connections is the connection-scale scenario: how many
// connections an echo server holds, and what each one costs it.
//
// Every connection is opened at a stated ramp (--ramp connections a
// second over all of them), held, and sends one small message (a batch of
// --batch frames of --record-size bytes) every --send-interval, on its own
// schedule (the open loop, connection i offset by i/N of the interval, so
// the sends spread evenly). Where the server echoes, each round trip is
// timed from its scheduled time: the p50 and p99 at that scale. The
// connections are driven by echo's driver on the event loops
// (load/evloop: a few kilobytes a connection on the generator's side), so
// the generator holds 100,000 connections on one core.
//
// Its summary block "connections" says how long opening them all took,
// the ramp asked and achieved, and the connect errors by class; the
// harness adds each side's memory per connection and the server's CPU
// with N connections held (docs/sweep.md, "The connection-scale sweep").
//
// It registers itself with load.Register; import it (or
// load/scenario/all) for `--scenario connections`.
package connections

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/scenario/echo"
)

// Name is the scenario's registered name, and its block's key in a
// target file and in the summary.
const Name = "connections"

// Defaults of its knobs.
const (
	DefaultRamp         = 5000 // connections a second
	DefaultSendInterval = 10 * time.Second
	// DefaultObjective is the ceiling's objective when the sweep gives
	// none: every round trip's p99 within 50 ms (a point with errors, or
	// short of connections, is not clean and never a ceiling anyway).
	DefaultObjective = "latency_ns.p99 <= 50ms"
)

// DefaultLadder and QuickLadder are the connection ladders a target's
// block brings (load.LadderBlock): up to 100,000 connections, which one
// 2-core machine with 24 GiB holds (docs/sweep.md); QUICK's, a smoke test.
var (
	DefaultLadder = []int{1000, 5000, 20_000, 50_000, 100_000}
	QuickLadder   = []int{500, 2000}
)

func init() {
	load.Register(load.Definition{
		Name:       Name,
		Help:       "connections held open at a ramp, each sending one small message an interval to an echo server: the most it holds, and what each costs",
		DefaultURL: echo.DefaultURL,
		NewParams:  func() load.Params { return &Params{Ramp: DefaultRamp, SendInterval: DefaultSendInterval} },
		Report:     report,
		Target: &load.TargetDef{
			Key:         Name,
			Parse:       parseTarget,
			FromURL:     func(u string) json.RawMessage { b, _ := json.Marshal(Target{load.ServerURLs{WSURL: u}}); return b },
			BatchLadder: []int{1},
			BatchNote:   "each connection sends one message each --send-interval: the load grows with the connections",
		},
	})
}

// Params are the scenario's own knobs.
type Params struct {
	// Ramp is how many connections open a second, over all of them; 0:
	// as fast as the connect strategy lets them.
	Ramp float64 `json:"ramp_per_s"`
	// SendInterval is how often each connection sends its message.
	SendInterval time.Duration `json:"send_interval_ns"`
	// IO is the echo driver's I/O mode, as it resolved it.
	IO string `json:"io"`
}

// MultiServer: repeated --url spread the connections, connection i to
// server i mod N (load.MultiServer).
func (p *Params) MultiServer() bool { return true }

// Flags binds --ramp and --send-interval.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.Float64Var(&p.Ramp, "ramp", p.Ramp, "`N` connections opened a second, over all of them (0: as fast as --connect-strategy lets them)")
	fs.DurationVar(&p.SendInterval, "send-interval", p.SendInterval, "each connection sends one message (a --batch) every `duration`, on its own schedule")
}

// Validate sets the open loop's rate from the send interval: each
// connection sends once an interval, so --rate is theirs together, and a
// --rate of one's own is refused.
func (p *Params) Validate(c *load.Config, given func(string) bool) error {
	switch {
	case !(p.Ramp >= 0) || p.Ramp > 1e9:
		return fmt.Errorf("--ramp %g: want connections a second, 0 (no ramp) up to 1e9", p.Ramp)
	case p.SendInterval < time.Millisecond || p.SendInterval > time.Hour:
		return fmt.Errorf("--send-interval %v: want 1ms to 1h", p.SendInterval)
	case given("rate"):
		return errors.New("--rate: --scenario connections sends one message per connection each --send-interval; give that instead")
	case c.Drop:
		return errors.New("--drop: --scenario connections holds its connections on the event loops, which close them themselves; drop with --scenario echo")
	}
	for _, u := range append([]string{c.URL}, c.URLs...) {
		if strings.HasPrefix(u, "wss://") {
			return fmt.Errorf("--url %q: --scenario connections speaks ws:// (wss is not supported)", u)
		}
	}
	c.Rate = float64(c.Connections) / p.SendInterval.Seconds()
	e := echo.Params{IO: echo.DefaultIO}
	if err := e.Validate(c, func(string) bool { return false }); err != nil {
		return err
	}
	p.IO = e.IO
	return nil
}

// New builds the driver: echo's, held open at the ramp.
func (p *Params) New(c *load.Config, pool *payload.Pool) (load.Scenario, error) {
	return &held{Driver: echo.NewDriver(c, &echo.Params{IO: p.IO}, pool), p: p}, nil
}

// held is echo's driver with its connections opened at the ramp, and its
// summary block.
type held struct {
	*echo.Driver
	p *Params

	startOnce sync.Once
	start     int64        // mono: the first connect
	last      atomic.Int64 // mono: the last connect that opened
}

// Connect opens connection i at its turn of the ramp: i/Ramp seconds
// after the first.
func (h *held) Connect(ctx context.Context, i int) error {
	h.startOnce.Do(func() { h.start = load.Mono() })
	if h.p.Ramp > 0 {
		due := h.start + int64(float64(i)/h.p.Ramp*1e9)
		if !load.SleepUntil(due, ctx.Done()) {
			return ctx.Err()
		}
	}
	if err := h.Driver.Connect(ctx, i); err != nil {
		return err
	}
	now := load.Mono()
	for {
		last := h.last.Load()
		if now <= last || h.last.CompareAndSwap(last, now) {
			return nil
		}
	}
}

// Block is the summary's "connections" block.
type Block struct {
	// Open is the connections that opened, OpenNs the time from the
	// first connect to the last one that opened.
	Open   int   `json:"open"`
	OpenNs int64 `json:"open_ns"`
	// RampPerS is the ramp asked (0: none), AchievedPerS the one the
	// connections opened at (Open / OpenNs).
	RampPerS     float64 `json:"ramp_per_s"`
	AchievedPerS float64 `json:"achieved_per_s"`
	// SendIntervalNs is each connection's interval between sends.
	SendIntervalNs int64 `json:"send_interval_ns"`
	// ConnectErrors are the connects that failed, by class
	// (ECONNREFUSED, timeout, EMFILE, ...), as the summary's errors
	// count them (connect_CLASS).
	ConnectErrors map[string]int64 `json:"connect_errors"`
}

// Finish closes the connections and writes the block.
func (h *held) Finish(res *load.Result, m *load.Recorder) {
	h.Driver.Finish(res, m)
	b := Block{Open: res.Summary.ConnectionsOpen, RampPerS: h.p.Ramp, SendIntervalNs: int64(h.p.SendInterval), ConnectErrors: map[string]int64{}}
	if last := h.last.Load(); last > 0 {
		b.OpenNs = last - h.start
		if b.OpenNs > 0 {
			b.AchievedPerS = float64(b.Open) / (float64(b.OpenNs) / 1e9)
		}
	}
	for k, n := range res.Summary.ErrorsByReason {
		if class, ok := strings.CutPrefix(k, "connect_"); ok {
			b.ConnectErrors[class] = n
		}
	}
	_ = res.Summary.SetBlock(Name, b) // marshals: numbers and strings only
}

// report is the block's lines of `ceiling load`'s report.
func report(res *load.Result) (warnings []string, rows []load.ReportRow) {
	var b Block
	if ok, err := res.Summary.Block(Name, &b); !ok || err != nil {
		return nil, nil
	}
	open := fmt.Sprintf("%d in %v", b.Open, time.Duration(b.OpenNs).Round(time.Millisecond))
	if b.AchievedPerS > 0 {
		open += fmt.Sprintf(" (%.0f/s", b.AchievedPerS)
		if b.RampPerS > 0 {
			open += fmt.Sprintf(" of %.0f/s asked", b.RampPerS)
		}
		open += ")"
	}
	rows = append(rows, load.ReportRow{Name: "opened", Value: open},
		load.ReportRow{Name: "each sends", Value: "one message every " + time.Duration(b.SendIntervalNs).String()})
	if len(b.ConnectErrors) > 0 {
		var parts []string
		for _, k := range sortedKeys(b.ConnectErrors) {
			parts = append(parts, fmt.Sprintf("%s %d", k, b.ConnectErrors[k]))
		}
		warnings = append(warnings, "CONNECT ERRORS: "+strings.Join(parts, ", "))
	}
	return warnings, rows
}
