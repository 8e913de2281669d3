package result

// CountCheck is a point's generator count checked against the server's
// own (docs/targets.md, "Server metrics"): the generator, or the agents
// whose counts were merged, cannot make up a figure that the server did
// not count too. A target opts in with metrics.counts, naming for a
// scenario the counter that counts what the generator's throughput counts.
type CountCheck struct {
	// Series is the server's counter (metrics.counts[scenario]).
	Series string `json:"series"`
	// ServerPerS is the counter's delta over the part of the measured
	// window that both metrics reads cover (OverlapS), per second.
	ServerPerS float64 `json:"server_per_s"`
	OverlapS   float64 `json:"overlap_s"`
	// GeneratorPerS is the point's throughput_per_s: what the generator
	// (or the agents, merged) reported.
	GeneratorPerS float64 `json:"generator_per_s"`
	// Ratio is GeneratorPerS / ServerPerS; the point is invalid when it
	// is further from 1 than Tolerance: the smallest inflation (or loss)
	// this check detects. Tolerance is CountTolerance plus the share of
	// the server's count that a batch per connection in flight is, plus
	// the share of the window that OverlapS leaves out (the generator's
	// count alone covers it).
	Ratio     float64 `json:"ratio"`
	Tolerance float64 `json:"tolerance"`
	// Verdict is CountsAgree, CountsDisagree, or CountsUnchecked when the
	// server's figure could not be had (Reason says why): such a point
	// is not clean, since nothing vouches for its count.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// CountCheck verdicts.
const (
	CountsAgree     = "agree"
	CountsDisagree  = "disagree"
	CountsUnchecked = "unchecked"
)

// CountTolerance is how far from 1 a point's generator/server ratio may
// be. Measured on refserver (docs/targets.md, "Server metrics"), the ratio
// stayed within 1.3% in echo and fanout; 5% leaves room for a loaded
// machine and still catches an inflation of one part in twenty.
const CountTolerance = 0.05
