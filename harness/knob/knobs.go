package knob

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/internal/wire"
)

// ceilingLoad reports whether a GENERATOR command is a ceiling binary's
// own `load`, with fixed flags or none (its `agent` is then what AGENTS
// runs, and the fixed flags are the point's for every agent).
func ceilingLoad(cmd string) bool {
	f := strings.Fields(cmd)
	return len(f) >= 2 && f[1] == "load"
}

// Knobs is the table. Its order is the order of the flags' usage and of
// the docs tables: the sweep's CPUs, ladders and generator, the agents'
// (knobs_agents.go), the server's and a point's, the connection-scale
// sweep's (knobs_conns.go), then the two-arm sweep's (knobs_compare.go).
var Knobs = slices.Concat(sweepKnobs, agentKnobs, runKnobs, connKnobs, compareKnobs)

// sweepKnobs are the CPUs', the ladders' and the generator's knobs,
// first in the table.
var sweepKnobs = []Knob{
	{
		Env: "SRV_CPUSET", Flag: "srv-cpuset", Arg: "LIST", Default: "all CPUs but the first",
		Help:  "CPUs the server is pinned to, taskset syntax (`1`, `1,2,3`, `1-3`)",
		Parse: cpusetParse(func(o *Options) *cpuset.Set { return &o.ServerCPUs }),
		Get:   func(o *Options) string { return o.ServerCPUs.String() },
	},
	{
		Env: "LT_CPUSET", Flag: "lt-cpuset", Arg: "LIST", Default: "the first CPU",
		Help:  "CPUs the generator is pinned to",
		Parse: cpusetParse(func(o *Options) *cpuset.Set { return &o.GeneratorCPUs }),
		Get:   func(o *Options) string { return o.GeneratorCPUs.String() },
	},
	{
		Env: "SRV_USER", Flag: "srv-user", Arg: "USER", Default: "unset: the harness's user",
		Help:  "run the server under test as USER (a name or a uid, not root), with none of the harness's rights: it cannot write the harness's files nor signal its processes; in a two-arm sweep only the head's servers, the base's run as the harness; needs a harness running as root (docs/targets.md, \"A server you do not trust\")",
		Parse: stringParse(func(o *Options) *string { return &o.ServerUser }),
		Get:   func(o *Options) string { return o.ServerUser },
	},
	boolKnob("ALLOW_OVERLAP", "allow-overlap", "let the two sets overlap (refused otherwise); the result then carries a warning",
		func(o *Options) *bool { return &o.AllowOverlap }),
	{
		Env: "BATCH_LADDER", Flag: "batch-ladder", Arg: "LADDER", Default: "`10 100 512 1024 4096`",
		Help: "batch sizes, strictly increasing, space or comma separated",
		Parse: func(o *Options, _, v string) error {
			l, err := ParseLadder("", v)
			if err == nil {
				o.BatchLadder = l
			}
			return err
		},
		Check: func(o *Options) error { return o.BatchLadder.checkRungs() },
		Get:   func(o *Options) string { return o.BatchLadder.String() },
	},
	{
		Env: "CONNS_LADDER_<batch>", Flag: "conns-ladder", Arg: "BATCH=LADDER", Default: "by batch size (see the default ladders)",
		Help: "connection ladder of one batch size, e.g. `10=32,64,128` as a flag; the flag is repeatable",
		Parse: func(o *Options, key, v string) error {
			b, err := strconv.Atoi(key)
			if err != nil || b <= 0 {
				return fmt.Errorf("batch %q is not a positive integer", key)
			}
			l, err := ParseLadder("", v)
			if err != nil {
				return err
			}
			if o.ConnsLadders == nil {
				o.ConnsLadders = ConnsLadders{}
			}
			o.ConnsLadders[b] = l
			return nil
		},
		Check: func(o *Options) error {
			for _, b := range slices.Sorted(maps.Keys(o.ConnsLadders)) {
				if err := o.ConnsLadders[b].checkRungs(); err != nil {
					return fmt.Errorf("batch %d: %w", b, err)
				}
			}
			return nil
		},
		Get: func(o *Options) string { return o.ConnsLadders.String() },
	},
	{
		Env: "SEARCH", Flag: "search", Arg: "MODE", Default: "`ladder`",
		Help:  "how each batch's connections are chosen: `ladder` runs every rung of its connection ladder; `bisect` searches between the ladder's lowest and top rung (bracket, then bisect) for the same ceiling in fewer points (see \"Search\")",
		Parse: stringParse(func(o *Options) *string { return &o.Search }),
		Check: oneOf(func(o *Options) string { return o.Search }, "search", SearchLadder, SearchBisect),
		Get:   func(o *Options) string { return o.Search },
	},
	{
		Env: "RECORD_SIZE", Flag: "record-size", Arg: "BYTES", Default: "`256`",
		Help:  "bytes per message",
		Parse: intParse(func(o *Options) *int { return &o.RecordSize }),
		Check: func(o *Options) error {
			switch {
			case o.RecordSize <= 0:
				return fmt.Errorf("%d is not a positive number of bytes", o.RecordSize)
			case o.RecordSize > wire.MaxRecordSize:
				return fmt.Errorf("%d is above the generator's limit of %d bytes per message", o.RecordSize, wire.MaxRecordSize)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.Itoa(o.RecordSize) },
	},
	{
		Env: "HEADLINE_BATCH", Flag: "headline-batch", Arg: "N", Default: "`10`",
		Help:  "the batch whose ceiling is the headline; must be a rung of `BATCH_LADDER`",
		Parse: intParse(func(o *Options) *int { return &o.HeadlineBatch }),
		Check: positive(func(o *Options) int { return o.HeadlineBatch }, "batch size"),
		Get:   func(o *Options) string { return strconv.Itoa(o.HeadlineBatch) },
	},
	{
		Env: "REPS", Flag: "reps", Arg: "N", Default: "`1`",
		Help:  "runs of every point (stated in the result), 1 to 100",
		Parse: intParse(func(o *Options) *int { return &o.Reps }),
		Check: func(o *Options) error {
			if err := positive(func(o *Options) int { return o.Reps }, "count")(o); err != nil {
				return err
			}
			if o.Reps > MaxReps {
				return fmt.Errorf("%d is above %d: every point runs that many times, so the sweep would take %d times as long as one rep; split it into runs", o.Reps, MaxReps, o.Reps)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.Itoa(o.Reps) },
	},
	durationKnob("DURATION", "duration", "`10s` (quick: `3s`)", "measured window per point; `10s` or bare seconds `10`",
		func(o *Options) *time.Duration { return &o.Duration }, true),
	durationKnob("WARMUP", "warmup", "`3s` (quick: `1s`)", "warm-up before the window, excluded from every figure",
		func(o *Options) *time.Duration { return &o.Warmup }, false),
	boolKnob("ALLOW_LONG", "allow-long", "run a plan of more than 24 hours of load (its points' warm-ups and windows, re-run blocks included), refused otherwise; every ladder has at most 64 rungs and every duration knob is at most `1h` in any case",
		func(o *Options) *bool { return &o.AllowLong }),
	{
		Env: "SCENARIO", Flag: "scenario", Arg: "NAME", Default: "`echo`",
		Help:  "a scenario the generator registers ({scenarios}), or the name of a file in `benchmark/scenarios` (`rooms`); `ceiling load -h` describes each",
		Parse: stringParse(func(o *Options) *string { return &o.Scenario }),
		Check: func(o *Options) error {
			if !wire.IsScenario(o.Scenario) && !scenarioFileExists(o.Scenario) {
				return fmt.Errorf("%q is not a scenario (%s)", o.Scenario, strings.Join(wire.ScenarioNames(), " | "))
			}
			return nil
		},
		Get: func(o *Options) string { return o.Scenario },
	},
	{
		Env: "OUT", Flag: "out", Arg: "FILE", Default: "`out/ceiling.json`",
		Help:  "where the result goes (checked writable before anything boots; rewritten whole before every point as this run's partial document and at the end, see \"The result document\")",
		Parse: stringParse(func(o *Options) *string { return &o.Out }),
		Check: func(o *Options) error {
			if strings.TrimSpace(o.Out) == "" {
				return fmt.Errorf("empty path")
			}
			if fi, err := os.Stat(o.Out); err == nil && fi.IsDir() {
				return fmt.Errorf("%s is a directory, want a file path", o.Out)
			}
			return nil
		},
		Get: func(o *Options) string { return o.Out },
	},
	func() Knob {
		k := boolKnob("QUICK", "quick", "smoke-test sweep: batches `10 1024`, ladders `32 64` and `8 16` (any other batch: the first two rungs of its default ladder), short points",
			func(o *Options) *bool { return &o.Quick })
		k.Early = true
		return k
	}(),
	{
		Env: "GENERATOR", Flag: "generator", Arg: "COMMAND", Default: "this binary's `load`",
		Help:  "another generator command, honouring the `ceiling load` flags and JSON (docs/ARCHITECTURE.md, \"The generator contract\")",
		Parse: stringParse(func(o *Options) *string { return &o.Generator }),
		Check: func(o *Options) error {
			if g := strings.Fields(o.Generator); len(g) > 0 {
				if _, err := lookPath(g[0]); err != nil {
					return err
				}
			}
			return nil
		},
		Get: func(o *Options) string { return o.Generator },
	},
}

// runKnobs are the knobs of the server under test and what a point
// runs, after agentKnobs in the table.
var runKnobs = []Knob{
	{
		Env: "TARGET", Flag: "target", Arg: "FILE", Default: "`benchmark/targets/refserver.json`",
		Help:  "the target file describing the server under test (docs/targets.md)",
		Parse: stringParse(func(o *Options) *string { return &o.TargetFile }),
		Get:   func(o *Options) string { return o.TargetFile },
	},
	{
		Flag: "server-cmd", Arg: "COMMAND", Default: "from the target file",
		Help:  "override the target's command line (space separated; `{port}` `{addr}` `{host}` are filled in)",
		Parse: stringParse(func(o *Options) *string { return &o.ServerCmd }),
		Get:   func(o *Options) string { return o.ServerCmd },
	},
	{
		Flag: "url", Arg: "URL", Default: "from the target file",
		Help:  "override the target's URL for the scenario (`{addr}` is filled in)",
		Parse: stringParse(func(o *Options) *string { return &o.URL }),
		Get:   func(o *Options) string { return o.URL },
	},
	{
		Flag: "ready", Arg: "PROBE", Default: "from the target file",
		Help:  "override the target's readiness probe: `tcp:{addr}`, `http://{addr}/health`, `log:REGEX`",
		Parse: stringParse(func(o *Options) *string { return &o.Ready }),
		Get:   func(o *Options) string { return o.Ready },
	},
	func() Knob {
		k := durationKnob("", "ready-timeout", "from the target file, or `10s`", "override the target's readiness timeout",
			func(o *Options) *time.Duration { return &o.ReadyTimeout }, false)
		k.Get = func(o *Options) string {
			if o.ReadyTimeout == 0 {
				return ""
			}
			return o.ReadyTimeout.String()
		}
		return k
	}(),
	boolKnob("", "allow-unpinned-url", "run a URL without `{addr}` or `{port}` (a server the harness did not boot), with a warning in the result; as the target's `allow_unpinned_url`",
		func(o *Options) *bool { return &o.AllowUnpinnedURL }),
	{
		Env: "HEADROOM_PROBE", Flag: "headroom-probe", Arg: "FRACTION", Default: "`0` (off)",
		Help: "run the headline once more with the generator held to this fraction of its cores by a cgroup quota, e.g. `0.5`; needs cgroup write access (see \"The headroom probe\")",
		Parse: func(o *Options, _, v string) error {
			f, err := ParseFraction(v)
			if err == nil {
				o.HeadroomProbe = f
			}
			return err
		},
		// Written so that NaN fails too: every comparison with NaN is false.
		Check: func(o *Options) error {
			if !(o.HeadroomProbe >= 0 && o.HeadroomProbe < 1) {
				return fmt.Errorf("%g is not a fraction in (0, 1) of the generator's cores (0: no probe)", o.HeadroomProbe)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.FormatFloat(o.HeadroomProbe, 'g', -1, 64) },
	},
	{
		Flag: "work-dir", Arg: "DIR", Default: "a new temp dir",
		Help:  "per-point logs (`server.log`, or `server-NAME.log` per server of a multi-server target; `generator.log`), markers and generator JSON; each point's directory is emptied before it runs. A temp dir the sweep made (`/tmp/ceiling-sweep-*`) is removed after a successful run (exit 0); a given one is kept",
		Parse: stringParse(func(o *Options) *string { return &o.WorkDir }),
		Get:   func(o *Options) string { return o.WorkDir },
	},
	boolKnob("KEEP_WORK_DIR", "keep-work-dir", "keep the temp work dir after a successful run too",
		func(o *Options) *bool { return &o.KeepWorkDir }),
	{
		Env: "SCENARIO_FILE", Flag: "scenario-file", Arg: "FILE", Default: "the target's",
		Help:  "a scenario file (docs/scenarios.md) for `SCENARIO=script`, in place of the target block's; `SCENARIO=rooms` is short for `SCENARIO_FILE=benchmark/scenarios/rooms.json`",
		Parse: stringParse(func(o *Options) *string { return &o.ScenarioFile }),
		Get:   func(o *Options) string { return o.ScenarioFile },
	},
	{
		Env: "FAULT", Flag: "fault", Arg: "KIND:SERVER@FRACTION", Default: "unset: no resilience point",
		Help: "after the sweep, one resilience point at the headline's rung: the target's server SERVER (a `servers[].name`) gets SIGKILL (`kill`) or SIGSTOP (`stop`) at FRACTION of the measured window, e.g. `kill:node2@0.5`; the point records when, the connections dropped by server, and each server's delivered % before and after; it is never a ceiling (scenario fanout, a multi-server target; docs/cluster.md)",
		Parse: func(o *Options, _, v string) error {
			f, err := ParseFault(v)
			if err == nil {
				o.Fault = f
			}
			return err
		},
		Get: func(o *Options) string { return o.Fault.String() },
	},
	boolKnob("DROP", "drop", "after each window, every client drops at once with no close handshake; the point records whether the server's ready probe answered, how soon, and whether a new client was served (`curve[].drop`)",
		func(o *Options) *bool { return &o.Drop }),
	{
		Env: "IO_PATTERN", Flag: "io-pattern", Arg: "PATTERN", Default: "`batch-wake`",
		Help:  "how `ceiling load`'s echo connections read their replies (recorded as `meta.client_io`): `batch-wake` wakes once per batch (SO_RCVLOWAT: the least generator CPU), `eager` reads each reply as it arrives, as browsers and Node's `ws` do (`--eager-reads`); what each costs the server is in docs/efficiency.md",
		Parse: stringParse(func(o *Options) *string { return &o.IOPattern }),
		Check: func(o *Options) error {
			if err := oneOf(func(o *Options) string { return o.IOPattern }, "pattern", wire.IOBatchWake, wire.IOEager)(o); err != nil {
				return err
			}
			switch {
			case o.IOPattern == wire.IOBatchWake:
			case o.Generator != "" && !ceilingLoad(o.Generator):
				return fmt.Errorf("%s is `ceiling load`'s --eager-reads; GENERATOR %q reads its own way", o.IOPattern, o.Generator)
			case o.Scenario != DefaultScenario:
				return fmt.Errorf("%s is the %s scenario's --eager-reads, not %s's", o.IOPattern, DefaultScenario, o.Scenario)
			}
			return nil
		},
		Get: func(o *Options) string { return o.IOPattern },
	},
	{
		Env: "SOURCE_ADDRS", Flag: "source-addrs", Arg: "ADDRS", Default: "`auto`",
		Help:  "local addresses the generator's connections spread over, round-robin, each its own ephemeral port range (about 28k ports): `auto` (127.0.0.1..N against a loopback server when a point's connections exceed half the port range), `off`, a count `N` (127.0.0.1..127.0.0.N), or addresses and ranges `127.0.0.1-127.0.0.8,...`; passed as the generator's `--source-addrs` when not `auto`",
		Parse: stringParse(func(o *Options) *string { return &o.SourceAddrs }),
		Check: func(o *Options) error {
			_, _, err := wire.ParseSourceAddrs(o.SourceAddrs)
			if err != nil {
				return errors.New(strings.TrimPrefix(err.Error(), "--source-addrs "))
			}
			return nil
		},
		Get: func(o *Options) string { return o.SourceAddrs },
	},
	{
		Env: "OBJECTIVE", Flag: "objective", Arg: "CONDITIONS", Default: "the scenario's, else none",
		Help:  "conditions on each point's summary, e.g. `latency_ns.p99 <= 100ms, fanout.delivered_pct >= 99.9`: a batch's ceiling is then its clean point with the most connections that meets them all (see \"Objectives\")",
		Parse: stringParse(func(o *Options) *string { return &o.Objective }),
		Check: func(o *Options) error {
			_, err := objective.Parse(o.Objective)
			return err
		},
		Get: func(o *Options) string { return o.Objective },
	},
	boolKnob("CALIBRATE", "calibrate", "before the sweep, measure the generator's own cap per core against a null sink (`ceiling calibrate`, for the sweep's scenario, batch ladder and record size; about 40 s quick, 70 s otherwise) and record it in `meta.calibration` (see \"Calibration\")",
		func(o *Options) *bool { return &o.Calibrate }),
	{
		Env: "CALIBRATION", Flag: "calibration", Arg: "FILE", Default: "none",
		Help:  "a saved `ceiling calibrate --out` document, recorded in `meta.calibration`: a point within 15% of its batch's cap (times the generator's cores) is flagged (see \"Calibration\")",
		Parse: stringParse(func(o *Options) *string { return &o.CalibrationFile }),
		Get:   func(o *Options) string { return o.CalibrationFile },
	},
	{
		Env: "PROFILE_DIR", Flag: "profile", Arg: "DIR", Default: "off",
		Help:  "save a profile of the server over each point's window, fetched from the target's `profile` url, as `DIR/point-<index>-b<batch>-c<conns>-r<rep>.pprof` (the point's `profile_file`); a failed fetch is recorded on the point, never fails it",
		Parse: stringParse(func(o *Options) *string { return &o.ProfileDir }),
		Check: func(o *Options) error {
			if fi, err := os.Stat(o.ProfileDir); o.ProfileDir != "" && err == nil && !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", o.ProfileDir)
			}
			return nil
		},
		Get: func(o *Options) string { return o.ProfileDir },
	},
}
