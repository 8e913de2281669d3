package knob

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
	"github.com/ceiling-bench/ceiling/internal/wire"
)

// Defaults of the knobs that are not ladders.
const (
	DefaultRecordSize    = 256
	DefaultHeadlineBatch = 10
	DefaultReps          = 1
	DefaultDuration      = 10 * time.Second
	DefaultWarmup        = 3 * time.Second
	DefaultScenario      = "echo"
	DefaultOut           = "out/ceiling.json"
	DefaultTargetFile    = "benchmark/targets/refserver.json"

	QuickDuration = 3 * time.Second
	QuickWarmup   = 1 * time.Second

	// ConnectConcurrency is pinned explicitly for every point: bounded
	// connects, at most this many in flight, so a high rung is not an
	// auth storm.
	ConnectConcurrency = 32
)

// MaxAgents bounds AGENTS.
const MaxAgents = 64

// MaxReps and MaxCompareReps bound REPS and COMPARE_REPS: a count past
// them is a typo or a run of days, refused before anything boots (the
// schedule and the result grow with it before the first point).
const (
	MaxReps        = 100
	MaxCompareReps = 100
)

// The upper bounds of the other knobs, refused before anything boots
// (exit 2, naming the knob): a value past them is a typo, or a run that
// only a CI job's timeout would end.
const (
	// MaxRungs bounds every ladder (BATCH_LADDER, CONNS_LADDER_<batch>).
	MaxRungs = 64
	// MaxConnections bounds COMPARE_PREFER: a count past it is a typo.
	MaxConnections = 1_000_000
	// MaxDuration bounds every duration knob (DURATION, WARMUP,
	// COMPARE_DURATION, COMPARE_WARMUP, AGENTS_JOIN_TIMEOUT,
	// --ready-timeout).
	MaxDuration = time.Hour
	// MaxPlannedLoad bounds the load a plan can hold at most (its points'
	// warm-ups and windows, re-run blocks included), unless ALLOW_LONG.
	MaxPlannedLoad = 24 * time.Hour
)

// Options is every knob of a sweep, as the user gave it. The CLI fills it
// in three layers: DefaultOptions(quick), then ApplyEnv (the make
// variables), then its flags; Resolve turns it into a Plan, filling what
// is still open (CPU sets, ladders) and validating it all before anything
// boots. A zero CPU set or ladder means "not given". The
// knob table (Knobs, table.go) maps each variable and flag to its field.
type Options struct {
	ServerCPUs    cpuset.Set // SRV_CPUSET
	ServerUser    string     // SRV_USER: a user name or uid; "" runs servers as the harness
	Fault         Fault      // FAULT: a resilience point; zero: none
	GeneratorCPUs cpuset.Set // LT_CPUSET
	AllowOverlap  bool
	AllowLong     bool // ALLOW_LONG: a plan past MaxPlannedLoad; Resolve spends it

	BatchLadder   Ladder       // BATCH_LADDER
	ConnsLadders  ConnsLadders // CONNS_LADDER_<batch>; batches not listed get DefaultConnsLadder
	RecordSize    int          // RECORD_SIZE, bytes
	HeadlineBatch int          // HEADLINE_BATCH, must be a rung of BatchLadder
	Reps          int          // REPS
	Duration      time.Duration
	Warmup        time.Duration
	Scenario      string // a registered scenario (wire.IsScenario)
	Out           string // result path
	Quick         bool
	Generator     string // GENERATOR command line; empty: this binary's `load`
	// Agents is AGENTS: each point runs through this many `ceiling agent`
	// processes under the harness's coordinator (harness/agents); 0 runs
	// the one generator.
	Agents int
	// AgentsListen is AGENTS_LISTEN: the sweep starts no agents; it
	// listens here for Agents remote `ceiling agent`s for the whole sweep.
	AgentsListen string
	// AgentsToken is AGENTS_TOKEN, checked (agenttoken.Check): what
	// AGENTS_LISTEN's agents must prove. Its knob reads back as
	// "[token]", and the plan's secrets hold it, so nothing written shows
	// it; the harness hands it to harness/agents as an agents.Token.
	// Resolve reads AgentsTokenFile (AGENTS_TOKEN_FILE) into it. It is a
	// Secret, so that printing the options does not print it either.
	AgentsToken     Secret
	AgentsTokenFile string
	// AgentsTLSCert, AgentsTLSKey and AgentsTLSCA are AGENTS_TLS_CERT,
	// _KEY and _CA: the coordinator's certificate and key, and the CA
	// that signed the agents' (mutual TLS; all three or none).
	AgentsTLSCert, AgentsTLSKey, AgentsTLSCA string
	// AgentsJoinTimeout is AGENTS_JOIN_TIMEOUT: how long a point waits for
	// every agent to join and be ready (0: 60 s, 2 min with AgentsListen).
	AgentsJoinTimeout time.Duration
	// AgentsNetns is AGENTS_NETNS (default on): as root, local agents run
	// in network namespaces of their own on a bridge (agentside.Lab).
	AgentsNetns bool
	// AgentsPortRange is AGENTS_PORT_RANGE, "LO-HI": each agent
	// namespace's ip_local_port_range (a test knob: a few hundred
	// connections then need several source addresses). Empty: the kernel's.
	AgentsPortRange string
	TargetFile      string // TARGET
	// HeadroomProbe > 0 runs the headline once more with the generator
	// held to this fraction of its cores by a cgroup quota (HEADROOM_PROBE).
	HeadroomProbe float64

	// Two-arm sweep (docs/compare.md): a BaseTargetFile makes one.
	BaseTargetFile  string        // BASE_TARGET: the base arm's server; TargetFile is the head's
	CompareReps     int           // COMPARE_REPS: repeats per arm at each compared point, >= 2
	Alpha           float64       // ALPHA: significance level of the comparison, in (0, 1)
	CompareStop     string        // COMPARE_STOP: pocock | obf | fixed (sequential stopping, compare.go)
	CompareDuration time.Duration // COMPARE_DURATION: window of each compare repeat
	CompareWarmup   time.Duration // COMPARE_WARMUP: warm-up of each compare repeat
	CompareScope    string        // COMPARE_SCOPE: headline | curve
	CompareBudget   time.Duration // COMPARE_BUDGET: the two-arm run's time (headline scope); 0: none
	ComparePrefer   int           // COMPARE_PREFER: the rung to compare at when the arms differ; 0: none
	FailOn          string        // FAIL_ON: the headline verdicts that make a two-arm sweep exit 1
	// CompareArms is COMPARE_ARMS (auto | warm | fresh): whether each
	// arm's server is kept up across points; CompareRebootEvery is
	// COMPARE_REBOOT_EVERY, the blocks between warm arms' fresh boots (0:
	// automatic, -1: never).
	CompareArms        string
	CompareRebootEvery int
	// CompareWindowsGiven: COMPARE_DURATION or COMPARE_WARMUP was given,
	// and fixes the blocks' windows; unset, a budgeted headline
	// comparison sizes them from its first pass.
	CompareWindowsGiven bool
	// ServerCosts is SERVER_COSTS: what a server takes to be ready and
	// to stop, for planning COMPARE_BUDGET before anything boots (the
	// action fills it from the last published result); zero: the target
	// files' costs, else measured on the first block.
	ServerCosts ServerCosts
	// CompareMode is COMPARE_MODE as asked (auto | interleaved | duet);
	// Resolve turns auto into one of the others. A duet's second half is
	// DuetServerCPUs and DuetGeneratorCPUs (DUET_CPUSETS, or derived).
	CompareMode string
	// CompareProfile is COMPARE_PROFILE: when a two-arm sweep profiles
	// both arms' servers in extra blocks after its verdict (auto: where
	// the headline is slower; on: whatever the verdict; off: never).
	CompareProfile                    string
	DuetServerCPUs, DuetGeneratorCPUs cpuset.Set

	// Overrides of the target file (flags only).
	ServerCmd    string // whole command line, space separated, placeholders allowed
	URL          string
	Ready        string
	ReadyTimeout time.Duration
	// AllowUnpinnedURL runs a URL without the point's address, as the
	// target field allow_unpinned_url does (--allow-unpinned-url).
	AllowUnpinnedURL bool

	// KeepWorkDir keeps the work dir the sweep made for itself after a
	// successful run (KEEP_WORK_DIR, --keep-work-dir); one given with
	// --work-dir is never removed.
	KeepWorkDir bool

	// ProfileDir, when set, saves a profile of the server over each
	// point's window there (PROFILE_DIR, --profile; profile.go).
	ProfileDir string

	// ScenarioFile is SCENARIO_FILE: a declarative scenario file
	// (docs/scenarios.md) run by the scenario that reads files, in place
	// of its target block's own file.
	ScenarioFile string

	// Drop is DROP: after each window every client drops at once with no
	// close handshake, and the point records whether the server stayed
	// up and served a new client (curve[].drop).
	Drop bool

	// IOPattern is IO_PATTERN: wire.IOBatchWake (ceiling load's default)
	// or wire.IOEager (--eager-reads).
	IOPattern string
	// SourceAddrs is SOURCE_ADDRS: the generator's --source-addrs ("" or
	// "auto": not passed, the generator's own auto).
	SourceAddrs string

	// Objective is OBJECTIVE: the service-level objective a point must
	// meet to be a ceiling (load/objective); "" : the scenario's own
	// (a target block's Objective), else none, and the ceiling is the
	// highest clean throughput.
	Objective string

	// Search is SEARCH: SearchLadder runs every rung of every connection
	// ladder; SearchBisect searches between each ladder's ends for the
	// same ceiling in fewer points (search.go).
	Search string

	// Calibrate is CALIBRATE: measure the generator's cap against a null
	// sink before the sweep (package calibrate). CalibrationFile is
	// CALIBRATION: a saved calibration document; Resolve reads and checks
	// it into the Plan's Calibration.
	Calibrate       bool
	CalibrationFile string

	// ConnRamp and ConnInterval are CONN_RAMP and CONN_INTERVAL:
	// SCENARIO=connections's --ramp (split over the agents) and
	// --send-interval. ServerConnBytes is SERVER_CONN_BYTES: the server's
	// memory per connection the limit check before boot plans for.
	ConnRamp        float64
	ConnInterval    time.Duration
	ServerConnBytes uint64

	// Not knobs: set by the caller.
	WorkDir string   // per-point logs, markers and JSON; empty: a new dir under os.TempDir
	Command []string // the harness's own command line, for the result
}

// DefaultOptions are the defaults before env and flags. quick swaps in the
// small ladder and short points (QUICK=1, about a minute in all).
func DefaultOptions(quick bool) Options {
	o := Options{
		BatchLadder:   slices.Clone(DefaultBatchLadder),
		ConnsLadders:  ConnsLadders{},
		RecordSize:    DefaultRecordSize,
		HeadlineBatch: DefaultHeadlineBatch,
		Reps:          DefaultReps,
		Duration:      DefaultDuration,
		Warmup:        DefaultWarmup,
		Scenario:      DefaultScenario,
		Search:        SearchLadder,
		Out:           DefaultOut,
		TargetFile:    DefaultTargetFile,
		ReadyTimeout:  0, // the target file's, or 10 s
		AgentsNetns:   true,
		SourceAddrs:   wire.SourceAuto,
		IOPattern:     wire.IOBatchWake,

		ConnRamp:        DefaultConnRamp,
		ConnInterval:    DefaultConnInterval,
		ServerConnBytes: DefaultServerConnBytes,
	}
	o.setCompareDefaults(quick)
	if quick {
		o.Quick = true
		o.BatchLadder = slices.Clone(QuickBatchLadder)
		o.Duration = QuickDuration
		o.Warmup = QuickWarmup
	}
	return o
}

// QuickFromEnv reports whether QUICK is set to a true value; the CLI needs
// it before the defaults are laid down.
func QuickFromEnv(lookup func(string) (string, bool)) (bool, error) {
	v, ok := lookup("QUICK")
	if v = strings.TrimSpace(v); !ok || v == "" {
		return false, nil
	}
	var o Options
	if err := knobByEnv("QUICK").Parse(&o, "", v); err != nil {
		return false, fmt.Errorf("QUICK: %w", err)
	}
	return o.Quick, nil
}

// ApplyEnv overrides o with the make variables that are set and not empty
// (make exports empty ones), row by row of the knob table (table.go).
// environ lists NAME=VALUE pairs, scanned for the pattern rows
// (CONNS_LADDER_<batch>). Every error names the variable. Early knobs
// (QUICK) are the caller's, read before the defaults.
func (o *Options) ApplyEnv(lookup func(string) (string, bool), environ []string) error {
	var errs []error
	set := func(k Knob, name, key, v string) {
		err := k.Parse(o, key, v)
		if err == nil && k.Check != nil {
			err = k.Check(o)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	for _, k := range Knobs {
		if k.Env == "" || k.Early {
			continue
		}
		if prefix, ok := k.Pattern(); ok {
			for _, kv := range environ {
				name, v, _ := strings.Cut(kv, "=")
				key, found := strings.CutPrefix(name, prefix)
				if !found || strings.TrimSpace(v) == "" {
					continue
				}
				set(k, name, key, v)
			}
			continue
		}
		if v, ok := lookup(k.Env); ok {
			if v = strings.TrimSpace(v); v != "" {
				set(k, k.Env, "", v)
			}
		}
	}
	return errors.Join(errs...)
}

// ParseSeconds reads a duration as Go writes it ("10s", "1m30s") or as a
// bare number of seconds ("10"), the way the seed's scripts took DURATION.
// Negative durations are refused, and so are NaN and infinities (which
// strconv accepts as numbers) and a count of seconds too large for a
// time.Duration: converting those gives an arbitrary value, not an error.
func ParseSeconds(s string) (time.Duration, error) {
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return 0, fmt.Errorf("%q is not a finite duration (e.g. 10s or 10)", s)
		case f < 0:
			return 0, fmt.Errorf("%q is negative", s)
		case f*float64(time.Second) >= math.MaxInt64:
			return 0, fmt.Errorf("%q seconds is longer than a duration can hold", s)
		}
		d = time.Duration(f * float64(time.Second))
	} else {
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 10s or 10)", s)
		}
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// ParseFraction reads a finite number such as 0.5 (HEADROOM_PROBE);
// strconv also accepts NaN and Inf, which are refused here because they
// pass every range check made with < and > and then cannot be encoded in
// the result. The range itself is Resolve's to check.
func ParseFraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a finite number such as 0.5", s)
	}
	return f, nil
}

// ConnsLadder is the connection ladder of one batch size after defaults.
// ConnsLadders holds only what the user set, so that a warning about a
// ladder for a batch outside BATCH_LADDER is never about a default.
func (o *Options) ConnsLadder(batch int) Ladder { return o.ConnsLadders.For(batch, o.Quick) }

// For is the ladder of batch: the one set for it, else the default
// (QUICK's when quick).
func (c ConnsLadders) For(batch int, quick bool) Ladder {
	if l, ok := c[batch]; ok {
		return l
	}
	if quick {
		return QuickConnsLadder(batch)
	}
	return DefaultConnsLadder(batch)
}

// ParsePortRange reads AGENTS_PORT_RANGE's "LO-HI".
func ParsePortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi > 65535 || hi < lo {
		return 0, 0, fmt.Errorf("%q is not a port range LO-HI within 1024-65535", s)
	}
	return lo, hi, nil
}

// Secret is a knob's value that nothing may print: fmt shows it as
// "[token]" (or "" when unset), whatever the verb; Text is the value.
type Secret string

// Text is the secret itself, for the one place that uses it.
func (s Secret) Text() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[token]"
}

// GoString masks %#v too.
func (s Secret) GoString() string { return s.String() }
