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

	"github.com/ceiling-bench/ceiling/internal/argv"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/pinning"
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
// docs/ARCHITECTURE.md) to o: the common ones, then the chosen scenario's
// own (load.Params.Flags). The scenario is read from args first, since its
// flags depend on it.
func newLoadFlags(o *loadOptions, args []string, stderr io.Writer) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("ceiling load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &o.cfg
	*c = load.DefaultConfig()
	c.Scenario = scenarioArg(args)
	d, ok := load.Lookup(c.Scenario)
	if !ok {
		return nil, &load.UnknownScenarioError{Name: c.Scenario}
	}
	fs.Usage = func() { loadHelp(fs, stderr) }
	fs.Var(&enumValue{&c.Scenario, load.ScenarioNames()}, "scenario", "`name`: "+strings.Join(load.ScenarioNames(), " | ")+" (its own flags are listed below)")
	fs.Var(urlsValue{c}, "url", "server URL (default: the scenario's, listed below); repeated, several servers, connection i to the i mod N-th (the nats scenarios)")
	fs.IntVar(&c.Connections, "connections", c.Connections, "WebSocket connections")
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
	fs.StringVar(&c.SourceAddrs, "source-addrs", "", "`addrs` the connections spread over, round-robin: auto (default: 127.0.0.1..N against a loopback server when the connections exceed half the local port range), off, a count N (127.0.0.1..127.0.0.N), or addresses and ranges (127.0.0.1-127.0.0.8,...)")
	fs.BoolVar(&c.Drop, "drop", false, "after the window, drop every connection at once with no close handshake, then time --drop-probe and check a new client is served (summary.drop)")
	fs.StringVar(&c.DropProbe, "drop-probe", "", "with --drop: the server's ready probe, `http://...` (2xx) or tcp:HOST:PORT")
	fs.StringVar(&c.MeasureMarker, "measure-marker", "", "create this file once every connection is open (and subscribed) and the warm-up has ended")
	fs.StringVar(&c.StartGate, "start-gate", "", "once every connection is open, create `FILE`.ready and start the load only at the time a coordinator writes to FILE (Unix ns): several generators' windows on one instant (a duet)")
	fs.StringVar(&c.JSONPath, "json", "", "write the JSON result document to this file")
	fs.BoolVar(&o.selfTest, "self-test", false, "check the histogram and the payload golden vectors, then exit (needs no server)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress lines on stderr")
	c.Params = d.NewParams()
	c.Params.Flags(fs)
	return fs, nil
}

// scenarioArg is the --scenario of args (the last one wins, as in
// flag), or the default. It stops at "--" and skips nothing else: a
// scenario named after a flag that takes a value is read as flag parses
// it, since every other flag is given as --name value or --name=value.
func scenarioArg(args []string) string {
	if name, ok := argv.Value(args, "scenario"); ok {
		return name
	}
	return load.DefaultScenario
}

// otherScenarioFlag reports a flag of args that belongs to another
// scenario than the chosen one, so that it is refused by name ("--app-id
// is only read by --scenario fanout") instead of as an unknown flag.
func otherScenarioFlag(fs *flag.FlagSet, scenario string, args []string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		name, _, _, isFlag := argv.Flag(a)
		if !isFlag || fs.Lookup(name) != nil {
			continue
		}
		for _, d := range load.Scenarios() {
			if d.Name == scenario {
				continue
			}
			other := flag.NewFlagSet(d.Name, flag.ContinueOnError)
			d.NewParams().Flags(other)
			if other.Lookup(name) != nil {
				return fmt.Errorf("--%s is only read by --scenario %s", name, d.Name)
			}
		}
	}
	return nil
}

// loadHelp prints the common flags, then each scenario's own. A flag that
// several scenarios declare (the NATS scenarios' TLS flags) is printed
// once, under the scenarios that share it, not once per scenario.
func loadHelp(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, loadUsage)
	common := flag.NewFlagSet("common", flag.ContinueOnError)
	sets := map[string]*flag.FlagSet{}
	users := map[string][]string{} // flag -> the scenarios declaring it
	for _, d := range load.Scenarios() {
		sfs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
		d.NewParams().Flags(sfs)
		sets[d.Name] = sfs
		sfs.VisitAll(func(f *flag.Flag) { users[f.Name] = append(users[f.Name], d.Name) })
	}
	fs.VisitAll(func(f *flag.Flag) {
		if len(users[f.Name]) == 0 {
			common.Var(f.Value, f.Name, f.Usage)
		}
	})
	common.SetOutput(w)
	printFlags(common, w)
	shared := map[string]*flag.FlagSet{} // "a, b" -> the flags exactly they share
	var groups []string
	for _, d := range load.Scenarios() {
		head := fmt.Sprintf("--scenario %s: %s", d.Name, d.Help)
		if d.DefaultURL != "" {
			head += fmt.Sprintf(" (default --url %s)", d.DefaultURL)
		}
		fmt.Fprintf(w, "\n%s\n", strings.Join(wrapWords(head, 96), "\n    "))
		own := flag.NewFlagSet(d.Name, flag.ContinueOnError)
		sets[d.Name].VisitAll(func(f *flag.Flag) {
			if len(users[f.Name]) == 1 {
				own.Var(f.Value, f.Name, f.Usage)
				return
			}
			key := strings.Join(users[f.Name], ", ")
			if shared[key] == nil {
				shared[key] = flag.NewFlagSet(key, flag.ContinueOnError)
				groups = append(groups, key)
			}
			if shared[key].Lookup(f.Name) == nil {
				shared[key].Var(f.Value, f.Name, f.Usage)
			}
		})
		own.SetOutput(w)
		printFlags(own, w)
		for _, key := range groups {
			if strings.Contains(", "+key+", ", ", "+d.Name+", ") {
				fmt.Fprintf(w, "  (and the flags shared by --scenario %s, listed below)\n", key)
			}
		}
	}
	for _, key := range groups {
		fmt.Fprintf(w, "\nflags shared by --scenario %s:\n", key)
		shared[key].SetOutput(w)
		printFlags(shared[key], w)
	}
}

// parseLoad parses and validates `ceiling load`'s flags; help is true
// when -h was asked for (and printed). Its error is a usageError.
func parseLoad(args []string, stderr io.Writer) (o loadOptions, help bool, err error) {
	fs, err := newLoadFlags(&o, args, stderr)
	if err != nil {
		return o, false, usageError{err}
	}
	if err := otherScenarioFlag(fs, o.cfg.Scenario, args); err != nil {
		return o, false, usageError{err}
	}
	if done, err := parseFlags(fs, args); done {
		return o, err == nil, err // -h: its usage printed
	}
	if fs.NArg() > 0 {
		return o, false, usagef("ceiling load: unexpected argument %q", fs.Arg(0))
	}
	if o.selfTest {
		return o, false, nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := o.cfg.Validate(func(name string) bool { return given[name] }); err != nil {
		return o, false, usageError{err}
	}
	if err := raiseNoFile(o.cfg.Connections); err != nil {
		return o, false, usageError{err}
	}
	return o, false, nil
}

func runLoad(args []string, stdout, stderr io.Writer) error {
	o, help, err := parseLoad(args, stderr)
	if err != nil || help {
		return err
	}
	if o.selfTest {
		if err := load.SelfTest(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "self-test passed")
		return nil
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

// urlsValue is --url: the first sets Config.URL, a repeat lists them all
// in Config.URLs.
type urlsValue struct{ c *load.Config }

func (v urlsValue) String() string {
	if v.c == nil {
		return ""
	}
	return v.c.URL
}

func (v urlsValue) Set(s string) error {
	switch {
	case v.c.URL == "":
		v.c.URL = s
	case len(v.c.URLs) == 0:
		v.c.URLs = []string{v.c.URL, s}
	default:
		v.c.URLs = append(v.c.URLs, s)
	}
	return nil
}

// raiseNoFile raises this process's RLIMIT_NOFILE to hold a socket per
// connection (raising the hard limit too where it may: root), and refuses
// a count that cannot fit, before anything connects: past the limit every
// further connect would fail with EMFILE (docs/pinning.md).
func raiseNoFile(connections int) error {
	need := uint64(connections) + load.NoFileSpare
	got, err := pinning.RaiseNoFile(need)
	if errors.Is(err, pinning.ErrUnsupported) {
		return nil // not Linux: the connects will say
	}
	if err == nil && got >= need {
		return nil
	}
	_, why := pinning.ReachableNoFile(need)
	if why == "" && err != nil {
		why = err.Error()
	}
	return fmt.Errorf("--connections %d: needs about %d file descriptors (a socket each, plus %d), but RLIMIT_NOFILE stays at %d: %s; lower --connections or raise the limit (ulimit -Hn, or run as root)",
		connections, need, load.NoFileSpare, got, why)
}
