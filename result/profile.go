package result

// A two-arm sweep's differential CPU profile (docs/compare.md, "Why is
// it slower"): the profiled points' recordings (Point.CPUProfile), and
// what they say together (ComparedPoint.ProfileDiff, on the headline).

// Profilers (CPUProfile.Tool, ProfileDiff.Tool).
const (
	ProfilerPerf  = "perf"  // perf record -e cpu-clock -g on the servers' processes
	ProfilerPprof = "pprof" // the target's "profile" URL (Go's /debug/pprof/profile)
)

// Frame verdicts (ProfileFrame.Verdict): internal/profdiff's rule.
const (
	FrameGrew        = "grew"
	FrameShrank      = "shrank"
	FrameWithinNoise = "within_noise"
	FrameUntested    = "untested"
)

// CPUProfile is a profiled point's recording of its servers' CPU over
// its measured window: where it is and what it covered, or why there is
// none. A point is profiled only where its spec asks (the profiled
// blocks after a two-arm verdict); a profile that could not be taken
// never fails the point.
type CPUProfile struct {
	Tool string `json:"tool,omitempty"`
	// File is the recording (perf.data, or the pprof profile), in the
	// point's work directory.
	File string `json:"file,omitempty"`
	// Pids are the servers' processes whose samples count (perf samples
	// their CPUs whole where it may).
	Pids []int `json:"pids,omitempty"`
	// DurationNs is how long it sampled; Messages the messages the
	// server handled meanwhile (the point's throughput times DurationNs).
	DurationNs int64   `json:"duration_ns,omitempty"`
	Messages   float64 `json:"messages,omitempty"`
	// Reason says why there is no recording ("" when File is set).
	Reason string `json:"reason,omitempty"`
}

// ProfileDiff is head against base in CPU per message handled, from the
// profiled points of both arms: the functions that grew or shrank beyond
// the blocks' spread, and the files to look further. Reason alone says
// why there is none.
type ProfileDiff struct {
	Reason string `json:"reason,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Unit of every cost: CPU nanoseconds per message handled.
	Unit string `json:"unit,omitempty"`
	// Rule says in words when a frame is listed; Alpha is the chance an
	// A/A comparison lists any, ZCritical the threshold each frame was
	// held to, Tested the frames tested (0: one block in an arm, none).
	Rule      string      `json:"rule,omitempty"`
	Alpha     float64     `json:"alpha,omitempty"`
	ZCritical float64     `json:"z_critical,omitempty"`
	Tested    int         `json:"tested,omitempty"`
	Base      *ProfileArm `json:"base,omitempty"`
	Head      *ProfileArm `json:"head,omitempty"`
	// Frames are the frames listed as grown (the most first), those
	// listed as shrunk (the most first), then the largest movers within
	// the noise; each list is bounded (MaxProfileFrames).
	Frames []ProfileFrame `json:"frames,omitempty"`
	// FlamegraphFile is the differential flame graph (a static SVG),
	// beside the folded stacks.
	FlamegraphFile string `json:"flamegraph_file,omitempty"`
	// Notes say what the reader should know (a point whose profile was
	// missing, unsymbolised samples).
	Notes []string `json:"notes,omitempty"`
}

// MaxProfileFrames bounds each of ProfileDiff.Frames' three lists.
const MaxProfileFrames = 20

// ProfileArm is one arm's profiled points, together.
type ProfileArm struct {
	Points       []int   `json:"points"` // their Point.Index
	Samples      int64   `json:"samples"`
	Unsymbolised int64   `json:"unsymbolised_samples"` // samples whose leaf frame had no symbol
	Messages     float64 `json:"messages"`
	// CPUNsPerMessage is the mean over the points of the servers' whole
	// CPU per message; NsPerSample the mean period of a sample.
	CPUNsPerMessage float64 `json:"cpu_ns_per_message"`
	NsPerSample     float64 `json:"ns_per_sample"`
	// FoldedFile is the arm's stacks over all its points, folded (one
	// "frame;frame;... samples" line each: flamegraph.pl reads it).
	FoldedFile string `json:"folded_file,omitempty"`
}

// ProfileFrame is one function, base against head, per message handled:
// its inclusive cost (wherever it is on the stack) and self cost (as the
// leaf), the change of the inclusive, and the rule's verdict.
type ProfileFrame struct {
	Function     string   `json:"function"`
	BaseNs       float64  `json:"base_ns_per_message"`
	HeadNs       float64  `json:"head_ns_per_message"`
	ChangeNs     float64  `json:"change_ns_per_message"`
	ChangePct    *float64 `json:"change_pct"` // nil where the base had none
	BaseSelfNs   float64  `json:"base_self_ns_per_message"`
	HeadSelfNs   float64  `json:"head_self_ns_per_message"`
	Verdict      string   `json:"verdict"`
	Z            float64  `json:"z,omitempty"`
	DetectableNs float64  `json:"detectable_ns_per_message,omitempty"` // the change the rule needed
	BaseSamples  int64    `json:"base_samples"`
	HeadSamples  int64    `json:"head_samples"`
}

// Listed is d's frames with verdict v, in their order, at most n.
func (d *ProfileDiff) Listed(v string, n int) []ProfileFrame {
	var out []ProfileFrame
	if d == nil {
		return nil
	}
	for _, f := range d.Frames {
		if f.Verdict == v && len(out) < n {
			out = append(out, f)
		}
	}
	return out
}
