package result

// How a two-arm sweep's arms run their servers (COMPARE_ARMS,
// ArmsRecord.Mode).
const (
	// ArmsFresh boots each point's server and stops it after the point
	// (seed 002's method): every repeat is a new process.
	ArmsFresh = "fresh"
	// ArmsWarm boots each arm's server once and keeps it up across
	// points, frozen while the other arm is measured; both are booted
	// afresh after the first pass and every few blocks.
	ArmsWarm = "warm"
	// ArmsAuto is warm where that buys enough more blocks than fresh
	// (harness/schedule's Costs.Choose), else fresh.
	ArmsAuto = "auto"
)

// ArmsRecord is how a two-arm sweep's arms ran their servers and what
// they cost (docs/compare.md, "Warm arms" and "What a point costs"):
// warm (each arm's server kept up across points, frozen while the other
// arm is measured, booted afresh after the first pass and every
// RebootEvery blocks) or fresh (a server booted and stopped per point),
// why, each arm's boot and stop as measured, and every warm boot.
type ArmsRecord struct {
	Mode   string `json:"mode"`   // warm | fresh
	Reason string `json:"reason"` // the rule's words (COMPARE_ARMS=auto), or the knob
	// RebootEvery is the blocks between warm arms' fresh boots; 0 with
	// fresh arms, or never.
	RebootEvery int `json:"reboot_every,omitempty"`
	// CostsFrom says where the costs the run planned with came from:
	// measured, or before the first boot a target file's costs, the last
	// published result, SERVER_COSTS, or assumed.
	CostsFrom string `json:"costs_from"`
	// OverheadNs is a point's time beside its warm-up, window, boot and
	// stop (the generator's start, connect and collect), median.
	OverheadNs int64     `json:"overhead_ns"`
	Base       ArmCosts  `json:"base"`
	Head       ArmCosts  `json:"head"`
	Boots      []ArmBoot `json:"boots,omitempty"`
	// Windows is how the blocks' windows were chosen (config's
	// compare_duration_ns and compare_warmup_ns hold them); nil where
	// the knobs fixed them or no block was planned.
	Windows *WindowsRecord `json:"windows,omitempty"`
}

// WindowsRecord is the blocks' windows as the first pass sized them
// (docs/compare.md, "Windows sized to the server's noise"): the window
// and warm-up, whether they were sized (false: the default kept), why,
// the noise they were sized from, and each candidate's predicted MDC
// relative to the default's.
type WindowsRecord struct {
	WindowNs int64  `json:"window_ns"`
	WarmupNs int64  `json:"warmup_ns"`
	Sized    bool   `json:"sized"`
	Reason   string `json:"reason"`
	// NoiseAt1sPct is a 1 s window's noise (the relative spread of its
	// mean throughput), DriftPct2PerS the drift between a block's runs
	// (%² per second of lag), as the first pass measured them.
	NoiseAt1sPct  float64           `json:"noise_at_1s_pct"`
	DriftPct2PerS float64           `json:"drift_pct2_per_s"`
	Candidates    []WindowCandidate `json:"candidates,omitempty"`
}

// WindowCandidate is one window weighed.
type WindowCandidate struct {
	WindowNs    int64   `json:"window_ns"`
	WarmupNs    int64   `json:"warmup_ns"`
	RelativeMDC float64 `json:"relative_mdc"`
}

// ArmCosts is one arm's server's boot (start to readiness) and stop
// (SIGTERM to exit and free ports), the medians of Boots and Stops
// timed; 0 where none was.
type ArmCosts struct {
	ReadyNs int64 `json:"ready_ns"`
	StopNs  int64 `json:"stop_ns"`
	Boots   int   `json:"boots"`
	Stops   int   `json:"stops"`
}

// ArmBoot is one warm boot of an arm's server: how long it took to be
// ready, or why it failed.
type ArmBoot struct {
	Arm     string `json:"arm"`
	ReadyNs int64  `json:"ready_ns"`
	Failed  string `json:"failed,omitempty"`
}

// Ended is why a compared point's blocks stopped: the one value the
// terminal, the PR comment and the site say it with.
type Ended struct {
	Kind string `json:"kind"` // EndDecided, EndPlanned, EndMost, EndFutile, EndBudget, EndNoTime
	Text string `json:"text"`
	// Blocks run and CleanBlocks with both arms clean when it stopped.
	Blocks      int `json:"blocks"`
	CleanBlocks int `json:"clean_blocks"`
	// NeedBudgetNs is, for EndNoTime, the budget that would have bought
	// the blocks the test needs.
	NeedBudgetNs int64 `json:"need_budget_ns,omitempty"`
}

// Why a compared point's blocks stopped (Ended.Kind).
const (
	EndDecided = "decided"      // a sequential look decided the test
	EndPlanned = "planned"      // the blocks planned ran with both arms clean
	EndMost    = "most_blocks"  // the most blocks, lost ones re-run, ran
	EndFutile  = "futile"       // the blocks left could not reach the pairs the test needs
	EndBudget  = "budget"       // COMPARE_BUDGET had no time for another block
	EndNoTime  = "budget_short" // after the first pass, the budget could not buy the blocks the test needs
)

// EndedAt is Ended at one compared (batch, connections); connections 0:
// the run ended before it had a rung to compare.
type EndedAt struct {
	Batch       int `json:"batch"`
	Connections int `json:"connections"`
	Ended
}
