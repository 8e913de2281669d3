package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

const loadUsage = `usage: ceiling load [flags]

Drive one point of load against a running WebSocket server and report it:
errors first, then throughput, latency percentiles (HdrHistogram) and the
generator's evidence about itself. --json writes the load.Result document.

flags:
`

// loadOptions is what the flags fill besides load.Config.
type loadOptions struct {
	cfg      load.Config
	selfTest bool
	quiet    bool
}

// newLoadFlags binds every `ceiling load` flag (the GENERATOR contract in
// docs/ARCHITECTURE.md) to o.
func newLoadFlags(o *loadOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ceiling load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, loadUsage); fs.PrintDefaults() }
	c := &o.cfg
	*c = load.DefaultConfig()
	fs.Var(&enumValue{&c.Scenario, []string{load.ScenarioEcho, load.ScenarioFanout}}, "scenario", "`name`: echo | fanout")
	fs.StringVar(&c.URL, "url", "", "server URL (default "+load.DefaultEchoURL+" for echo, "+load.DefaultFanoutURL+" for fanout; the app path is added)")
	fs.StringVar(&c.AppID, "app-id", c.AppID, "Pusher app id (fanout)")
	fs.StringVar(&c.Key, "key", c.Key, "Pusher app key (fanout)")
	fs.StringVar(&c.Secret, "secret", c.Secret, "Pusher app secret (fanout; never printed or recorded)")
	fs.IntVar(&c.Channels, "channels", c.Channels, "channels the subscribers are spread over, evenly (fanout)")
	fs.IntVar(&c.Publishers, "publishers", c.Publishers, "concurrent REST publishers (fanout)")
	fs.IntVar(&c.Connections, "connections", c.Connections, "WebSocket connections (echo) or subscribers (fanout)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "messages per write (echo) or events per publish request (fanout; > 1 uses batch_events)")
	fs.IntVar(&c.RecordSize, "record-size", c.RecordSize, "bytes per message payload")
	fs.Var(durationNs{&c.DurationNs}, "duration", "`duration` of the measured window, e.g. 10s")
	fs.Var(durationNs{&c.WarmupNs}, "warmup", "`duration` after every connection is open that is excluded from every statistic")
	fs.Var(finiteFloat{&c.Rate}, "rate", "open loop: operations per second in total (a batch for echo, a publish request for fanout); 0 = closed loop")
	fs.IntVar(&c.MaxInflight, "max-inflight", c.MaxInflight, "open loop: operations in flight per connection (per publisher for fanout) before the writer waits and the run is marked saturated")
	fs.Var(&enumValue{&c.Payload, payload.Modes}, "payload", "`mode`: constant | json | random")
	fs.Var(seedValue{&c.PayloadSeed}, "payload-seed", "`seed` of the json and random payloads (0 to 4294967295)")
	fs.Var(&enumValue{&c.ConnectStrategy, []string{load.ConnectBounded, load.ConnectStagger, load.ConnectAllAtOnce}}, "connect-strategy", "`name`: bounded | stagger | all-at-once")
	fs.IntVar(&c.ConnectConcurrency, "connect-concurrency", c.ConnectConcurrency, "bounded: connects in flight at most")
	fs.IntVar(&c.ConnectStaggerMs, "connect-stagger-ms", c.ConnectStaggerMs, "stagger: connection i starts after i * this many ms")
	fs.BoolVar(&c.EagerReads, "eager-reads", false, "closed echo loop: read each reply as it arrives (per-message latency) instead of waking once per batch (less generator CPU)")
	fs.Var(&enumValue{&c.IO, []string{load.IOReactor, load.IOGoroutines}}, "io", "`mode` of the closed echo loop: reactor (one epoll loop per GOMAXPROCS, Linux) | goroutines (one per connection)")
	fs.StringVar(&c.MeasureMarker, "measure-marker", "", "create this file once every connection is open (and subscribed) and the warm-up has ended")
	fs.StringVar(&c.JSONPath, "json", "", "write the JSON result document to this file")
	fs.BoolVar(&o.selfTest, "self-test", false, "check the histogram and the payload golden vectors, then exit (needs no server)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress lines on stderr")
	return fs
}

func runLoad(args []string, stdout, stderr io.Writer) error {
	var o loadOptions
	fs := newLoadFlags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("ceiling load: unexpected argument %q", fs.Arg(0))
	}
	if o.selfTest {
		if err := load.SelfTest(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "self-test passed")
		return nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := o.cfg.Validate(func(name string) bool { return given[name] }); err != nil {
		return usageError{err}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := stderr
	if o.quiet {
		progress = io.Discard
	}
	res, runErr := load.Run(ctx, o.cfg, load.Options{
		Version:  version,
		Command:  load.RedactCommand(append([]string{"ceiling", "load"}, args...)),
		Progress: progress,
	})
	if res != nil {
		if err := load.WriteReport(stdout, res); err != nil {
			return err
		}
		if o.cfg.JSONPath != "" {
			if err := load.WriteJSONFile(o.cfg.JSONPath, res); err != nil {
				return err
			}
		}
	}
	return runErr
}

// durationNs is a time.Duration flag stored in nanoseconds (the JSON unit).
type durationNs struct{ ns *int64 }

func (d durationNs) String() string {
	if d.ns == nil {
		return ""
	}
	return time.Duration(*d.ns).String()
}

func (d durationNs) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration like 10s or 500ms: %w", err)
	}
	*d.ns = int64(v)
	return nil
}

// enumValue accepts one of a fixed set of names.
type enumValue struct {
	s       *string
	allowed []string
}

func (e *enumValue) String() string {
	if e.s == nil {
		return ""
	}
	return *e.s
}

func (e *enumValue) Set(s string) error {
	for _, a := range e.allowed {
		if s == a {
			*e.s = s
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(e.allowed, ", "))
}

// seedValue is a uint32 payload seed.
type seedValue struct{ v *uint32 }

func (s seedValue) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatUint(uint64(*s.v), 10)
}

func (s seedValue) Set(str string) error {
	v, err := strconv.ParseUint(str, 10, 32)
	if err != nil {
		return fmt.Errorf("want an integer from 0 to 4294967295: %w", err)
	}
	*s.v = uint32(v)
	return nil
}
