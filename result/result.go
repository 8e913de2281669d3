package result

import (
	"encoding/json"
	"time"

	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/internal/wire"
)

// SchemaVersion is the version of the sweep document (`ceiling sweep
// --out`), the one the publisher reads. Bump it when a field changes meaning
// or disappears. Version 2 added the two-arm sweep: Point.Arm, the role
// "compare", Meta.BaseTarget, Config.CompareReps/Alpha and Comparison; a
// version 1 document reads as a single-arm sweep.
const SchemaVersion = 2

// OldestSchemaVersion is the oldest sweep document the publisher still
// reads: version 2 only added fields, so a version 1 document (a baseline
// published before) reads as a single-arm sweep.
const OldestSchemaVersion = 1

// Verdicts say which side limited a point. See docs/sweep.md, "The verdict rule" (and
// package harness/verdict) for the rule.
const (
	VerdictServerSaturated = "server-saturated"
	VerdictGeneratorCapped = "generator-capped" // the point is a lower bound
	VerdictBoth            = "both"             // both limits reached; also a lower bound
	VerdictNeither         = "neither"          // something else limits: see Point.VerdictReason
	VerdictFailed          = "failed"
)

// Point roles.
const (
	RoleSweep    = "sweep"
	RoleAARepeat = "aa_repeat"
	RoleCompare  = "compare" // a repeat at a compared rung of a two-arm sweep
	// RoleProfile is a two-arm sweep's profiled repeat, after the
	// compared blocks (COMPARE_PROFILE): never compared.
	RoleProfile = "profile"
)

// Arms of a two-arm sweep (Point.Arm); empty in a single-arm sweep.
const (
	ArmBase = "base"
	ArmHead = "head"
)

// Result is the document one `ceiling sweep` writes.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Meta          Meta   `json:"meta"`
	Regime        string `json:"regime"` // e.g. "echo, batch 10, 256 B, 3 server cores, 1 generator core"
	Config        Config `json:"config"`

	Headline Headline `json:"headline"`
	// NoiseFloorPct is |repeat - peak| / peak * 100 for the headline
	// point run again at the end (A-A). Null when no repeat could run.
	NoiseFloorPct *float64 `json:"noise_floor_pct"`

	// Partial is true when the sweep was interrupted (SIGINT/SIGTERM) and
	// the document holds only the points that finished.
	Partial       bool   `json:"partial"`
	PartialReason string `json:"partial_reason,omitempty"`

	// HeadroomProbe is the headline point run with the generator's CPU
	// capped by a cgroup quota (HEADROOM_PROBE); null when not run.
	HeadroomProbe *HeadroomProbe `json:"headroom_probe"`

	// Curve is every point in the order run, A-A repeat last. In a
	// two-arm sweep it holds both arms' points (Point.Arm), and
	// Headline, Ceilings and NoiseFloorPct describe the head arm only.
	Curve    []Point        `json:"curve"`
	Ceilings []BatchCeiling `json:"ceilings"`
	Warnings []string       `json:"warnings"`
	// Notes say how defaults were picked (the CPU sets for this machine,
	// a scenario's own ladder, the objective a scenario file brought):
	// facts about the run, not reasons to doubt it.
	Notes []string `json:"notes,omitempty"`

	// Comparison is the two-arm sweep's verdict of head against base
	// (DecideComparison over the curve); nil in a single-arm sweep.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Arms is how a two-arm sweep's arms ran their servers, warm or
	// fresh, and what they cost; Ended why each compared point's blocks
	// stopped (Summarize copies it into the comparison). Nil in a
	// single-arm sweep.
	Arms  *ArmsRecord `json:"arms,omitempty"`
	Ended []EndedAt   `json:"ended,omitempty"`

	// ConnectionCeiling is a connection-scale sweep's (SCENARIO=
	// connections) ceiling: the most connections held clean within the
	// objective, and what each costs; nil in any other sweep.
	ConnectionCeiling *ConnectionCeiling `json:"connection_ceiling,omitempty"`
}

// Meta is wire.Meta plus what only the harness knows.
type Meta struct {
	wire.Meta
	FinishedAt time.Time `json:"finished_at"`
	Runner     Runner    `json:"runner"`
	Pinning    Pinning   `json:"pinning"`
	Target     Target    `json:"target"`
	// BaseTarget is the base arm's server in a two-arm sweep (Target is
	// then the head's); nil in a single-arm sweep.
	BaseTarget *Target `json:"base_target,omitempty"`
	Generator  string  `json:"generator"` // "ceiling-load", or the GENERATOR command's name
	// ClientIO is how the generator's connections were driven and how
	// each wrote and read, from its own report (curve[].generator_self
	// engine and io_pattern): "loop, batch-wake". A ceiling holds for a
	// client pattern as well as for a server (docs/efficiency.md, "What a
	// client's pattern costs the server"). Points that disagree are
	// listed apart by "; "; empty when no point reported one.
	ClientIO string `json:"client_io,omitempty"`
	// Calibration is the generator's cap per core against a null sink
	// (CALIBRATE=1 or CALIBRATION=FILE); nil without one. See NearCap.
	Calibration *wire.Doc `json:"calibration,omitempty"`
}

// Runner identifies the machine class the sweep ran on (CI or local).
type Runner struct {
	CI       bool   `json:"ci"`
	Name     string `json:"name,omitempty"`     // RUNNER_NAME
	OS       string `json:"os,omitempty"`       // RUNNER_OS
	Arch     string `json:"arch,omitempty"`     // RUNNER_ARCH
	Workflow string `json:"workflow,omitempty"` // GITHUB_WORKFLOW
	RunID    string `json:"run_id,omitempty"`   // GITHUB_RUN_ID
}

// Pinning records the CPU sets asked for and the ones the kernel granted.
type Pinning struct {
	Supported          bool     `json:"supported"`
	ServerRequested    []int    `json:"server_cpus_requested"`
	ServerGranted      []int    `json:"server_cpus_granted"`
	GeneratorRequested []int    `json:"generator_cpus_requested"`
	GeneratorGranted   []int    `json:"generator_cpus_granted"`
	OverlapAllowed     bool     `json:"overlap_allowed"`
	SMTSiblings        [][2]int `json:"smt_siblings"` // (server cpu, generator cpu) pairs sharing a physical core
	NoFileLimit        uint64   `json:"nofile_limit"`
	// HarnessCPUs are the CPUs the harness process kept to, off both
	// pinned sets (pinning.KeepSelfOff); empty where none was free, and
	// then its share of the pinned CPUs is in each point's attribution.
	HarnessCPUs []int `json:"harness_cpus,omitempty"`
	// A duet's second half (config.compare_mode duet): the first is the
	// server and generator CPUs above. Each point's half says where it ran.
	DuetServer    []int `json:"duet_server_cpus,omitempty"`
	DuetGenerator []int `json:"duet_generator_cpus,omitempty"`
}

// Target is the server under test as it was booted.
type Target struct {
	Name    string   `json:"name"`
	File    string   `json:"file,omitempty"`
	Command []string `json:"command"`
	URL     string   `json:"url"`
	// User is the user its servers ran as (SRV_USER; a two-arm sweep's
	// head only); empty: the harness's own.
	User string `json:"user,omitempty"`
	// Servers are a target's several servers (empty Command), in the
	// order booted.
	Servers []TargetServer `json:"servers,omitempty"`
	// External: the server was not booted by the harness (the target's
	// "external"), and ExternalCPUs are the cores it was said to have.
	External     bool `json:"external,omitempty"`
	ExternalCPUs int  `json:"external_cpus,omitempty"`
}

// TargetServer is one of a target's several servers as booted.
type TargetServer struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
}

// Config is every sweep knob, after defaults were applied.
type Config struct {
	Scenario      string           `json:"scenario"`
	BatchLadder   []int            `json:"batch_ladder"`
	ConnsLadders  map[string][]int `json:"conns_ladders"` // key: batch size
	HeadlineBatch int              `json:"headline_batch"`
	RecordSize    int              `json:"record_size"`
	Reps          int              `json:"reps"`
	DurationNs    int64            `json:"duration_ns"`
	WarmupNs      int64            `json:"warmup_ns"`
	Order         []PointKey       `json:"order"` // the interleaved order the points ran in
	Quick         bool             `json:"quick"`
	// Search is SEARCH: "ladder" (every rung) or "bisect" (search.go:
	// fewer points between the same ladder's ends; Order is then the
	// points the search chose, in the order run).
	Search string `json:"search,omitempty"`
	// HeadroomProbeFraction is HEADROOM_PROBE: the share of its cores the
	// generator is held to for the headroom probe; 0: no probe.
	HeadroomProbeFraction float64 `json:"headroom_probe_fraction"`
	// Objective is OBJECTIVE (or the scenario's own): with one, a batch's
	// ceiling is its clean point with the most connections that meets it
	// (Point.Objective), not its highest throughput.
	Objective string `json:"objective,omitempty"`
	// Agents is AGENTS: each point ran through this many `ceiling agent`
	// processes (curve[].agents); 0 (absent): the one generator.
	Agents int `json:"agents,omitempty"`
	// SourceAddrs is SOURCE_ADDRS when given (not auto): the generator's
	// --source-addrs.
	SourceAddrs string `json:"source_addrs,omitempty"`

	// Two-arm sweep only (zero otherwise): COMPARE_REPS repeats per arm
	// at each compared point, the test's ALPHA, and the compare phase's
	// own window and warm-up (COMPARE_DURATION, COMPARE_WARMUP);
	// DurationNs and WarmupNs are then the first pass's. See docs/compare.md.
	CompareReps int     `json:"compare_reps,omitempty"`
	Alpha       float64 `json:"alpha,omitempty"`
	CompareStop string  `json:"compare_stop,omitempty"` // pocock | obf | fixed; empty: fixed (a document from before it)
	// CompareMode is how the arms ran: interleaved, or duet (both at
	// once, each on its half of the machine); empty: interleaved (a
	// document from before it).
	CompareMode       string `json:"compare_mode,omitempty"`
	CompareDurationNs int64  `json:"compare_duration_ns,omitempty"`
	CompareWarmupNs   int64  `json:"compare_warmup_ns,omitempty"`
	// CompareScope is COMPARE_SCOPE: headline (the headline batch's rung
	// compared, found by a search on its ladder; order then lists the
	// first pass's keys as run) or curve; empty: curve (a document from
	// before it). CompareBudgetNs is COMPARE_BUDGET when it planned the
	// blocks (compare_reps is then what it bought); 0: none.
	CompareScope    string `json:"compare_scope,omitempty"`
	CompareBudgetNs int64  `json:"compare_budget_ns,omitempty"`
	// CompareArms is COMPARE_ARMS (auto, warm or fresh; Result.Arms says
	// what ran), CompareRebootEvery COMPARE_REBOOT_EVERY (0 automatic, -1
	// never).
	CompareArms        string `json:"compare_arms,omitempty"`
	CompareRebootEvery int    `json:"compare_reboot_every,omitempty"`
}

// PointKey names one point of the sweep.
type PointKey struct {
	Batch       int `json:"batch"`
	Connections int `json:"connections"`
	Rep         int `json:"rep"`
}

// Headline is the flat summary readers use: the peak of HeadlineBatch.
type Headline struct {
	Clean          bool         `json:"clean"` // false: no clean point at the headline batch; the run exits 1
	ThroughputPerS float64      `json:"throughput_per_s"`
	Batch          int          `json:"batch"`
	Connections    int          `json:"connections"`
	LatencyNs      wire.Latency `json:"latency_ns"`
	Verdict        string       `json:"verdict"`
	LowerBound     bool         `json:"lower_bound"`
	// Repeats, in a two-arm sweep with a comparison, is how many of the
	// head's clean compare repeats at the compared rung the headline is
	// the median of (the lower of the middle two): its figures are that
	// repeat's. 0: the headline is the head's highest clean first-pass
	// point (or a single-arm sweep's ceiling).
	Repeats int `json:"repeats,omitempty"`
}

// CPUStats is one side's CPU over a point's measured window.
type CPUStats struct {
	Samples       int     `json:"samples"`
	MeanCores     float64 `json:"mean_cores"`
	P95Cores      float64 `json:"p95_cores"`
	PinnedCores   int     `json:"pinned_cores"`
	FractionMean  float64 `json:"fraction_of_pinned_mean"`
	FractionP95   float64 `json:"fraction_of_pinned_p95"`
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	// PinnedBusy is how busy the pinned CPUs were with anything (this
	// side, other processes, interrupts) over the window, from /proc/stat;
	// -1 when unknown. Well above FractionMean: the cores were shared.
	PinnedBusy float64 `json:"pinned_cpus_busy_fraction"`
	// StealFraction is the share of the pinned CPUs' time over the window
	// that the hypervisor ran someone else (/proc/stat steal), as counted,
	// never clamped; -1 when unknown. Above StealMax the point is
	// contended.
	StealFraction float64 `json:"pinned_cpus_steal_fraction"`
	// OverlapCores is the other side's estimated use of these pinned CPUs
	// when the two sets overlap (ALLOW_OVERLAP): the sweep's own work,
	// not contention. 0 when they do not overlap.
	OverlapCores float64 `json:"overlap_cores,omitempty"`
	// Attribution is who used this side's pinned CPUs over the window,
	// task by task (harness/attrib): the evidence that decides contention.
	// Nil where it was not measured (an external server's side, a system
	// without /proc, a document from before it existed): then the
	// residual rule decides (see Contention).
	Attribution *Attribution `json:"attribution,omitempty"`
	// Source is where the figures came from: empty for the harness's
	// own sampling of the process tree; for an external server (which
	// the harness cannot sample) CPUFromMetrics (package harness/verdict),
	// the delta of its process_cpu_seconds_total over the window against
	// external_cpus, or CPUUnknown.
	Source string `json:"source,omitempty"`
}

// Attribution is a side's pinned CPUs over a point's window, as
// fractions of their time (1.0: every pinned CPU busy for the whole
// window), by who ran there (harness/attrib).
type Attribution struct {
	// Foreign is every task that is not the sweep's: the figure that
	// makes a point contended above ForeignMax.
	Foreign float64 `json:"foreign_fraction"`
	// Server and Generator are the two process trees; on a side's own
	// CPUs the other side's share is non-zero only where the sets
	// overlap.
	Server    float64 `json:"server_fraction"`
	Generator float64 `json:"generator_fraction"`
	// Harness is the harness process itself (sampling, this scan).
	Harness float64 `json:"harness_fraction"`
	// Partner is the other arm of a duet block, running at the same
	// time on the other half: zero on a true split, its share of these
	// CPUs where the halves share CPUs (a simulated split). Not foreign.
	Partner float64 `json:"partner_fraction,omitempty"`
	// Kernel is kernel threads (ksoftirqd, kworker: the sweep's own
	// network work when it overflows interrupt context).
	Kernel float64 `json:"kernel_threads_fraction"`
	// Tasks names the foreign processes that took at least
	// NameFraction of the side's CPUs, largest first (at most 5).
	Tasks []ForeignTask `json:"foreign_tasks,omitempty"`
}

// ForeignTask is one foreign process's share of a side's pinned CPUs.
type ForeignTask struct {
	Comm     string  `json:"comm"`
	Pid      int     `json:"pid"`
	Fraction float64 `json:"fraction"`
}

// NamedCPU is one server's CPU over a point's window, of a target of
// several (Point.Servers): fractions against the servers' pinned cores,
// which they share; PinnedBusy and StealFraction are the set's.
type NamedCPU struct {
	Name string `json:"name"`
	// URL is the scenario's URL this server serves, when one names its
	// port (its clients' share in the point's scenario block "servers").
	URL string `json:"url,omitempty"`
	CPUStats
}

// Point is one measured (batch, connections, rep).
type Point struct {
	Index int    `json:"index"`
	Role  string `json:"role"`          // sweep | aa_repeat | headroom_probe | compare
	Arm   string `json:"arm,omitempty"` // base | head in a two-arm sweep; empty otherwise
	// Half is the half of the machine a duet point ran on: "a" (SRV_CPUSET,
	// LT_CPUSET) or "b" (meta.pinning.duet_*); empty outside a duet.
	Half        string `json:"half,omitempty"`
	Batch       int    `json:"batch"`
	Connections int    `json:"connections"`
	Rep         int    `json:"rep"`
	Status      string `json:"status"` // ok | failed

	ThroughputPerS float64      `json:"throughput_per_s"`
	LatencyNs      wire.Latency `json:"latency_ns"`
	Errors         int64        `json:"errors"`
	// ErrorsByReason is Errors by the generator's reason (optional:
	// absent in documents before it, and when there was none).
	ErrorsByReason map[string]int64 `json:"errors_by_reason,omitempty"`
	Saturated      bool             `json:"saturated"`
	Clean          bool             `json:"clean"` // no errors, not failed, not saturated, not contended
	// Contended: the pinned CPUs of either side were busy with other work
	// beyond SharedMargin, or the hypervisor stole more than StealMax of
	// them (see Contention). Such a point is never clean.
	Contended bool `json:"contended"`

	// ServerCPU is the server's CPU; a target of several servers
	// (TargetSpec.Servers) has their sum here, and each one's in Servers.
	ServerCPU    CPUStats            `json:"server_cpu"`
	Servers      []NamedCPU          `json:"servers,omitempty"`
	GeneratorCPU CPUStats            `json:"generator_cpu"`
	Generator    wire.GeneratorStats `json:"generator_self"` // as the generator reported it
	// ServerMemory and GeneratorMemory are each side's memory over the
	// window, with its baseline and its cost per connection (nil where
	// nothing was read: an external server, a failed point).
	ServerMemory    *Memory `json:"server_memory,omitempty"`
	GeneratorMemory *Memory `json:"generator_memory,omitempty"`

	Verdict       string `json:"verdict"`
	VerdictReason string `json:"verdict_reason"`
	LowerBound    bool   `json:"lower_bound"`
	// NearCap is set when the point's throughput came within
	// wire.NearCapPct of the generator's calibrated cap for its batch
	// (meta.calibration): a warning, not a verdict.
	NearCap *NearCap `json:"near_generator_cap,omitempty"`

	FailReason string `json:"fail_reason,omitempty"`
	// LogTail is the last lines of the log of the server that failed the
	// point (of several, the one FailReason names), or the generator's.
	LogTail string `json:"log_tail,omitempty"`
	// Escalated names the sides ("server", "generator"; "server NAME" of
	// several) that outlived SIGTERM by their stop grace and had to be
	// SIGKILLed.
	Escalated []string `json:"escalated,omitempty"`

	// Escaped lists processes of the point's server or generator tree
	// found alive after it was stopped, outside the supervisor's tree
	// (left in its cgroup or carrying its marker), and then killed.
	Escaped []EscapedProcess `json:"escaped,omitempty"`

	// Scenario holds the generator's scenario blocks of the summary, as it
	// wrote them (fanout: "fanout"; a scenario file: "kinds"), so each
	// point carries its per-kind figures.
	Scenario map[string]json.RawMessage `json:"scenario,omitempty"`
	// Drop is what DROP found after the window (nil without it).
	Drop *wire.DropResult `json:"drop,omitempty"`
	// Fault is what FAULT did to a resilience point and what it found
	// (RoleResilience; nil on every other point).
	Fault *Fault `json:"fault,omitempty"`
	// Agents lists the agents that ran the point with AGENTS (nil
	// without): each one's segment, clock, start skew, figures and
	// generator evidence; the point's own figures are their exact merge.
	Agents []AgentReport `json:"agents,omitempty"`
	// Objective is the objective judged on this point (Config.Objective);
	// nil without one.
	Objective *objective.Result `json:"objective,omitempty"`

	// ServerMetrics is the target's metrics over the window (nil without
	// "metrics"); ProfileFile the profile saved with --profile, or
	// ProfileError why none was.
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// CountCheck is the point's count against the server's own, when the
	// target names the counter (metrics.counts); nil without.
	CountCheck   *CountCheck `json:"count_check,omitempty"`
	ProfileFile  string      `json:"profile_file,omitempty"`
	ProfileError string      `json:"profile_error,omitempty"`
	// CPUProfile is the point's CPU recording when its spec asked for
	// one (a profiled block's point); nil otherwise.
	CPUProfile *CPUProfile `json:"cpu_profile,omitempty"`

	// SearchStep, SearchPhase and SearchReason place a SEARCH=bisect
	// sweep point on its batch's search path: its step (1-based, per
	// batch and rep), the phase ("bracket" or "bisect"; "retry": a
	// two-arm first pass's best rung run again after contention) and why
	// these connections were chosen. Absent from ladder sweeps.
	SearchStep   int    `json:"search_step,omitempty"`
	SearchPhase  string `json:"search_phase,omitempty"`
	SearchReason string `json:"search_reason,omitempty"`

	StartedAt  time.Time `json:"started_at"`
	WallTimeNs int64     `json:"wall_time_ns"`
	// ReadyNs is the time from starting the point's servers to their
	// readiness, StopNs from SIGTERM to their exit and free ports: a
	// point that booted its own (absent on a two-arm sweep's warm arms:
	// Result.Arms has theirs).
	ReadyNs int64 `json:"ready_ns,omitempty"`
	StopNs  int64 `json:"stop_ns,omitempty"`
}

// EscapedProcess is a process that escaped a point's containment.
type EscapedProcess struct {
	Pid     int    `json:"pid"`
	Command string `json:"command"` // its command name (/proc/PID/comm)
}

// BatchCeiling is one batch size's highest clean point.
type BatchCeiling struct {
	Batch          int          `json:"batch"`
	Found          bool         `json:"found"` // false: no clean point at this batch
	ThroughputPerS float64      `json:"throughput_per_s"`
	Connections    int          `json:"connections"`
	LatencyNs      wire.Latency `json:"latency_ns"`
	Verdict        string       `json:"verdict"`
	LowerBound     bool         `json:"lower_bound"`
	AtLadderTop    bool         `json:"at_ladder_top"` // widen CONNS_LADDER_<batch>
}

// HeadroomProbe compares the headline point run with the generator held to
// QuotaFraction of its cores against the headline itself.
type HeadroomProbe struct {
	QuotaFraction        float64  `json:"quota_fraction"` // of the generator's pinned cores
	Cgroup               string   `json:"cgroup,omitempty"`
	Index                int      `json:"index"` // its point in the curve
	Status               string   `json:"status"`
	ThroughputPerS       float64  `json:"throughput_per_s"`
	ChangePct            float64  `json:"change_pct"`    // vs the headline; negative: fell
	TolerancePct         float64  `json:"tolerance_pct"` // max(noise floor, 5)
	GeneratorHadHeadroom bool     `json:"generator_had_headroom"`
	GeneratorCPU         CPUStats `json:"generator_cpu"`
	Conclusion           string   `json:"conclusion"`
}

// Comparison verdicts (ComparedPoint.Verdict) and p99 verdicts
// (ComparedPoint.P99Verdict). See DecideComparison for the rule.
const (
	CompareFaster         = "faster"
	CompareSlower         = "slower"
	CompareWithinNoise    = "within_noise"
	CompareCannotConclude = "cannot_conclude"
	P99Better             = "better"
	P99Worse              = "worse"
)

// Comparison is a two-arm sweep's verdict: head against base at every
// compared (batch, connections), from the repeats with role "compare".
type Comparison struct {
	Alpha      float64         `json:"alpha"`      // significance level of the test (ALPHA)
	Confidence float64         `json:"confidence"` // of every interval: 1 - Alpha
	Reps       int             `json:"reps"`       // clean blocks per compared point asked for (COMPARE_REPS), the most a sequential stop looks at
	Stop       string          `json:"stop"`       // the stopping rule (COMPARE_STOP): pocock | obf | fixed
	Gate       string          `json:"gate"`       // which verdict gates, and how the others are reported
	Method     string          `json:"method"`     // the statistics, in words
	Headline   ComparedPoint   `json:"headline"`   // the compared point of the headline batch
	Points     []ComparedPoint `json:"points"`     // one per compared (batch, connections), ascending batch
}

// ComparedPoint is head against base at one (batch, connections).
type ComparedPoint struct {
	Batch       int    `json:"batch"`
	Connections int    `json:"connections"`
	Verdict     string `json:"verdict"` // faster | slower | within_noise | cannot_conclude
	Reason      string `json:"reason"`
	// Test names the primary test the verdict rests on (ComparePrimary).
	Test string `json:"test"`
	// ChangePct is the head/base change in percent: the Hodges-Lehmann
	// estimate of the paired log ratios (exp - 1); nil when no block has
	// both arms clean.
	ChangePct *float64 `json:"change_pct"`
	// CILowPct and CIHighPct bound the change at Confidence (Tukey's
	// interval of the paired log ratios' Walsh averages); nil when the
	// pairs are too few for that confidence.
	CILowPct  *float64 `json:"ci_low_pct"`
	CIHighPct *float64 `json:"ci_high_pct"`
	// PValue is the primary test's: the exact two-sided Wilcoxon
	// signed-rank test of the paired log ratios; nil with no pair.
	PValue *float64 `json:"p_value"`
	// Level is the nominal level the final look's p was held to: ALPHA
	// for a fixed design, less for a sequential one (alpha spent over
	// the looks, SequentialLevel).
	Level float64 `json:"level"`
	// NPairs is the blocks (adjacent base and head repeats) with both
	// arms clean: the paired test's n. NBase and NHead are each arm's
	// clean repeats, paired or not.
	NPairs int `json:"n_pairs"`
	NBase  int `json:"n_base"`
	NHead  int `json:"n_head"`
	// MDCPct is the minimum detectable change: the smallest change, in
	// percent either way, that the primary test at Alpha would detect
	// with 80% power given the observed spread of the pairs and their
	// number. Nil when the pairs are too few to detect any change.
	MDCPct *float64 `json:"mdc_pct"`
	// SpreadPct is the larger of the arms' MAD/median*100: the arms' own
	// noise, drift included, which the pairing removes.
	SpreadPct float64 `json:"spread_pct"`
	// AtLeast: the verdict rests on a lower bound (a generator-capped
	// arm), so the change is "at least" this large.
	AtLeast bool `json:"at_least"`
	// Blocks is how many blocks were run, Reruns how many of them re-ran
	// a block that had lost a repeat (contended or failed).
	Blocks int `json:"blocks"`
	Reruns int `json:"reruns"`
	// Sensitivity is said when the repeats left out (not clean) would
	// change the verdict had they counted; empty otherwise.
	Sensitivity string `json:"sensitivity,omitempty"`
	// Unpaired is the benchstat-compatible figure beside it: the
	// Mann-Whitney U test on each arm's clean repeats, pooled.
	Unpaired UnpairedTest `json:"unpaired"`

	// Ended is why the point's blocks stopped (decided at a look, the
	// blocks planned, the budget...), from Result.Ended; nil in a
	// document from before it.
	Ended *Ended `json:"ended,omitempty"`
	// ProfileDiff is the differential CPU profile of the two arms'
	// profiled points (headline only; nil without profiled points).
	ProfileDiff *ProfileDiff `json:"profile_diff,omitempty"`

	P99Verdict   string   `json:"p99_verdict"` // better | worse | within_noise | cannot_conclude
	P99ChangePct *float64 `json:"p99_change_pct"`
	P99PValue    *float64 `json:"p99_p_value"`
	// Memory is the server's memory per connection, head against base,
	// over the same blocks (information; FAIL_ON memory gates on it); nil
	// when no repeat measured one.
	Memory *MemoryComparison `json:"memory,omitempty"`

	Base ArmStats `json:"base"`
	Head ArmStats `json:"head"`
}

// UnpairedTest is the two-arm comparison as benchstat makes it: each
// arm's clean repeats as independent samples.
type UnpairedTest struct {
	// ChangePct is median(head)/median(base) - 1, in percent.
	ChangePct *float64 `json:"change_pct"`
	// CILowPct and CIHighPct: the Moses interval of the head/base ratio.
	CILowPct  *float64 `json:"ci_low_pct"`
	CIHighPct *float64 `json:"ci_high_pct"`
	// PValue: the two-sided Mann-Whitney U test.
	PValue *float64 `json:"p_value"`
	// MDCPct: as ComparedPoint's, for this test.
	MDCPct *float64 `json:"mdc_pct"`
}

// ArmStats is one arm's repeats at a compared point.
type ArmStats struct {
	N          int      `json:"n"` // clean samples
	MedianPerS float64  `json:"median_per_s"`
	CILowPerS  *float64 `json:"ci_low_per_s"` // nil when n is too small for the confidence
	CIHighPerS *float64 `json:"ci_high_per_s"`
	// SamplesPerS and P99SamplesNs are every clean repeat's throughput
	// and p99, in run order; Points are those repeats' Point.Index.
	SamplesPerS  []float64 `json:"samples_per_s"`
	P99SamplesNs []int64   `json:"p99_samples_ns"`
	Points       []int     `json:"points"`
	LowerBound   bool      `json:"lower_bound"` // any sample generator-capped
	Failed       int       `json:"failed"`      // repeats that failed or were not clean
}

// Point statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Search modes (Config.Search, SEARCH).
const (
	SearchLadder = "ladder" // every rung of every connection ladder
	SearchBisect = "bisect" // bracket, then bisect, between each ladder's ends
)
