package harness

import (
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// SchemaVersion is the version of the sweep document (`ceiling sweep
// --out`), the one the publisher reads. Bump it when a field changes meaning
// or disappears.
const SchemaVersion = 1

// Verdicts say which side limited a point. See docs/sweep.md, "The verdict rule" (and
// verdict.go) for the rule.
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

	Curve    []Point        `json:"curve"` // every point, in the order run, A-A repeat last
	Ceilings []BatchCeiling `json:"ceilings"`
	Warnings []string       `json:"warnings"`
}

// Meta is load.Meta plus what only the harness knows.
type Meta struct {
	load.Meta
	FinishedAt time.Time `json:"finished_at"`
	Runner     Runner    `json:"runner"`
	Pinning    Pinning   `json:"pinning"`
	Target     Target    `json:"target"`
	Generator  string    `json:"generator"` // "ceiling-load", or the GENERATOR command's name
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
}

// Target is the server under test as it was booted.
type Target struct {
	Name    string   `json:"name"`
	File    string   `json:"file,omitempty"`
	Command []string `json:"command"`
	URL     string   `json:"url"`
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
	// HeadroomProbeFraction is HEADROOM_PROBE: the share of its cores the
	// generator is held to for the headroom probe; 0: no probe.
	HeadroomProbeFraction float64 `json:"headroom_probe_fraction"`
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
	LatencyNs      load.Latency `json:"latency_ns"`
	Verdict        string       `json:"verdict"`
	LowerBound     bool         `json:"lower_bound"`
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
}

// Point is one measured (batch, connections, rep).
type Point struct {
	Index       int    `json:"index"`
	Role        string `json:"role"` // sweep | aa_repeat | headroom_probe
	Batch       int    `json:"batch"`
	Connections int    `json:"connections"`
	Rep         int    `json:"rep"`
	Status      string `json:"status"` // ok | failed

	ThroughputPerS float64      `json:"throughput_per_s"`
	LatencyNs      load.Latency `json:"latency_ns"`
	Errors         int64        `json:"errors"`
	Saturated      bool         `json:"saturated"`
	Clean          bool         `json:"clean"` // no errors, not failed, not saturated, not contended
	// Contended: the pinned CPUs of either side were busy with other work
	// beyond SharedMargin, or the hypervisor stole more than StealMax of
	// them (see Contention). Such a point is never clean.
	Contended bool `json:"contended"`

	ServerCPU    CPUStats            `json:"server_cpu"`
	GeneratorCPU CPUStats            `json:"generator_cpu"`
	Generator    load.GeneratorStats `json:"generator_self"` // as the generator reported it

	Verdict       string `json:"verdict"`
	VerdictReason string `json:"verdict_reason"`
	LowerBound    bool   `json:"lower_bound"`

	FailReason string `json:"fail_reason,omitempty"`
	LogTail    string `json:"log_tail,omitempty"` // last lines of the server's log for a failed point
	// Escalated names the sides ("server", "generator") that outlived
	// SIGTERM by their stop grace and had to be SIGKILLed.
	Escalated []string `json:"escalated,omitempty"`

	// Escaped lists processes of the point's server or generator tree
	// found alive after it was stopped, outside the supervisor's tree
	// (left in its cgroup or carrying its marker), and then killed.
	Escaped []EscapedProcess `json:"escaped,omitempty"`

	StartedAt  time.Time `json:"started_at"`
	WallTimeNs int64     `json:"wall_time_ns"`
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
	LatencyNs      load.Latency `json:"latency_ns"`
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
