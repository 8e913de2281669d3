package knob

import (
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// The knobs grouped by the part of a sweep that reads them. The harness
// validates Options and fills what they left open (harness.Resolve), then
// splits them into these groups once (Groups): the sweep that runs after
// reads its Plan's groups, never Options. The fields keep Options' names
// and meanings; the knobs that only shape the target (ServerCmd, URL,
// Ready, AllowUnpinnedURL) or name files Resolve reads (ServerUser) stay
// behind in Options.

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
	ServerCPUs, GeneratorCPUs         pinning.CPUSet
	AllowOverlap                      bool
	DuetServerCPUs, DuetGeneratorCPUs pinning.CPUSet
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
	Drop, KeepWorkDir              bool
	ProfileDir, WorkDir            string
}

// Compare is a two-arm sweep's knobs (BASE_TARGET, COMPARE_*, ALPHA).
type Compare struct {
	BaseTargetFile                 string
	CompareReps                    int
	Alpha                          float64
	CompareStop, CompareMode       string
	CompareDuration, CompareWarmup time.Duration
}

// Agents is AGENTS and the AGENTS_* knobs.
type Agents struct {
	Agents                                   int
	AgentsListen, AgentsTokenFile            string
	AgentsToken                              Secret
	AgentsTLSCert, AgentsTLSKey, AgentsTLSCA string
	AgentsJoinTimeout                        time.Duration
	AgentsNetns                              bool
	AgentsPortRange                          string
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
		CPUs: CPUs{ServerCPUs: o.ServerCPUs, GeneratorCPUs: o.GeneratorCPUs, AllowOverlap: o.AllowOverlap,
			DuetServerCPUs: o.DuetServerCPUs, DuetGeneratorCPUs: o.DuetGeneratorCPUs},
		Schedule: Schedule{BatchLadder: o.BatchLadder, ConnsLadders: o.ConnsLadders, HeadlineBatch: o.HeadlineBatch, Reps: o.Reps,
			Search: o.Search, Objective: o.Objective, Quick: o.Quick, Calibrate: o.Calibrate, HeadroomProbe: o.HeadroomProbe},
		Point: Point{Scenario: o.Scenario, ScenarioFile: o.ScenarioFile, RecordSize: o.RecordSize,
			Duration: o.Duration, Warmup: o.Warmup, ReadyTimeout: o.ReadyTimeout, Generator: o.Generator,
			SourceAddrs: o.SourceAddrs, Drop: o.Drop, KeepWorkDir: o.KeepWorkDir, ProfileDir: o.ProfileDir, WorkDir: o.WorkDir},
		Compare: Compare{BaseTargetFile: o.BaseTargetFile, CompareReps: o.CompareReps, Alpha: o.Alpha, CompareStop: o.CompareStop,
			CompareMode: o.CompareMode, CompareDuration: o.CompareDuration, CompareWarmup: o.CompareWarmup},
		Fault: o.Fault,
		Agents: Agents{Agents: o.Agents, AgentsListen: o.AgentsListen, AgentsTokenFile: o.AgentsTokenFile, AgentsToken: o.AgentsToken,
			AgentsTLSCert: o.AgentsTLSCert, AgentsTLSKey: o.AgentsTLSKey, AgentsTLSCA: o.AgentsTLSCA,
			AgentsJoinTimeout: o.AgentsJoinTimeout, AgentsNetns: o.AgentsNetns, AgentsPortRange: o.AgentsPortRange},
		Files: Files{Out: o.Out, TargetFile: o.TargetFile, CalibrationFile: o.CalibrationFile, Command: o.Command},
	}
}
