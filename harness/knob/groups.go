package knob

import (
	"time"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
)

// The knobs grouped by the part of a sweep that reads them. The harness
// validates Options and fills what they left open (harness.Resolve), then
// splits them into these groups once (Groups): the sweep that runs after
// reads its Plan's groups, never Options. A field is its knob's field of
// Options, under the same name less the group's (CompareReps is
// Compare.Reps, AgentsListen Agents.Listen, ServerCPUs CPUs.Server); the
// knobs that only shape the target (ServerCmd, URL, Ready,
// AllowUnpinnedURL), name a user Resolve looks up (ServerUser), lift
// the plan's bound that Resolve checks (AllowLong) or size the limit
// check before boot (ServerConnBytes) stay behind in Options.

// Groups is Options split by reader.
type Groups struct {
	CPUs     CPUs
	Schedule Schedule
	Point    Point
	Compare  Compare
	Fault    Fault
	Agents   Agents
	Files    Files
}

// CPUs are the pinned sets: SRV_CPUSET, LT_CPUSET, ALLOW_OVERLAP and a
// duet's second half (DUET_CPUSETS).
type CPUs struct {
	Server, Generator         cpuset.Set
	AllowOverlap              bool
	DuetServer, DuetGenerator cpuset.Set
}

// Schedule is what chooses the points: the ladders, the headline batch,
// REPS, SEARCH, QUICK, the headroom probe, OBJECTIVE and CALIBRATE.
type Schedule struct {
	BatchLadder         Ladder
	ConnsLadders        ConnsLadders
	HeadlineBatch, Reps int
	Search, Objective   string
	Quick, Calibrate    bool
	HeadroomProbe       float64
}

// ConnsLadder is Options.ConnsLadder.
func (s *Schedule) ConnsLadder(batch int) Ladder { return s.ConnsLadders.For(batch, s.Quick) }

// Point is what each point runs: the scenario and its file, the record
// size, the window, the generator and its addresses, DROP, the profile
// and the work dirs.
type Point struct {
	Scenario, ScenarioFile         string
	RecordSize                     int
	Duration, Warmup, ReadyTimeout time.Duration
	Generator, SourceAddrs         string
	IOPattern                      string // IO_PATTERN
	Drop, KeepWorkDir              bool
	ProfileDir, WorkDir            string
	// ConnRamp and ConnInterval are SCENARIO=connections's (CONN_RAMP,
	// CONN_INTERVAL).
	ConnRamp     float64
	ConnInterval time.Duration
}

// Compare is a two-arm sweep's knobs (BASE_TARGET, COMPARE_*, ALPHA).
type Compare struct {
	BaseTargetFile   string
	Reps             int
	Alpha            float64
	Stop, Mode       string
	Duration, Warmup time.Duration
	Scope            string
	Budget           time.Duration
	Prefer           int
	FailOn           string // read by the CLI once the run is over
	Arms             string // COMPARE_ARMS
	WindowsGiven     bool   // COMPARE_DURATION or COMPARE_WARMUP given
	RebootEvery      int    // COMPARE_REBOOT_EVERY: 0 auto, -1 never
	ServerCosts      ServerCosts
	Profile          string // COMPARE_PROFILE: auto | on | off
}

// Agents is AGENTS and the AGENTS_* knobs.
type Agents struct {
	Count                  int
	Listen, TokenFile      string
	Token                  Secret
	TLSCert, TLSKey, TLSCA string
	JoinTimeout            time.Duration
	Netns                  bool
	PortRange              string
}

// Files are the sweep's files and command line: OUT, TARGET, CALIBRATION
// and the harness's own command (the result's meta).
type Files struct {
	Out, TargetFile, CalibrationFile string
	Command                          []string
}

// Groups splits o by reader; each group shares o's slices.
func (o *Options) Groups() Groups {
	return Groups{
		CPUs: CPUs{Server: o.ServerCPUs, Generator: o.GeneratorCPUs, AllowOverlap: o.AllowOverlap,
			DuetServer: o.DuetServerCPUs, DuetGenerator: o.DuetGeneratorCPUs},
		Schedule: Schedule{BatchLadder: o.BatchLadder, ConnsLadders: o.ConnsLadders, HeadlineBatch: o.HeadlineBatch, Reps: o.Reps,
			Search: o.Search, Objective: o.Objective, Quick: o.Quick, Calibrate: o.Calibrate, HeadroomProbe: o.HeadroomProbe},
		Point: Point{Scenario: o.Scenario, ScenarioFile: o.ScenarioFile, RecordSize: o.RecordSize,
			Duration: o.Duration, Warmup: o.Warmup, ReadyTimeout: o.ReadyTimeout, Generator: o.Generator,
			SourceAddrs: o.SourceAddrs, IOPattern: o.IOPattern, Drop: o.Drop, KeepWorkDir: o.KeepWorkDir, ProfileDir: o.ProfileDir, WorkDir: o.WorkDir,
			ConnRamp: o.ConnRamp, ConnInterval: o.ConnInterval},
		Compare: Compare{BaseTargetFile: o.BaseTargetFile, Reps: o.CompareReps, Alpha: o.Alpha, Stop: o.CompareStop,
			Mode: o.CompareMode, Duration: o.CompareDuration, Warmup: o.CompareWarmup,
			Scope: o.CompareScope, Budget: o.CompareBudget, Prefer: o.ComparePrefer, FailOn: o.FailOn,
			Arms: o.CompareArms, RebootEvery: o.CompareRebootEvery, ServerCosts: o.ServerCosts, WindowsGiven: o.CompareWindowsGiven,
			Profile: o.CompareProfile},
		Fault: o.Fault,
		Agents: Agents{Count: o.Agents, Listen: o.AgentsListen, TokenFile: o.AgentsTokenFile, Token: o.AgentsToken,
			TLSCert: o.AgentsTLSCert, TLSKey: o.AgentsTLSKey, TLSCA: o.AgentsTLSCA,
			JoinTimeout: o.AgentsJoinTimeout, Netns: o.AgentsNetns, PortRange: o.AgentsPortRange},
		Files: Files{Out: o.Out, TargetFile: o.TargetFile, CalibrationFile: o.CalibrationFile, Command: o.Command},
	}
}
