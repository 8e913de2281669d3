package testenv

// Import lists for ImportsNone, named for what they keep out, so that
// each package's deps test says which kinds of package it must not link
// rather than repeating their paths.

// Module is this module's import path, with its slash.
const Module = "github.com/ceiling-bench/ceiling/"

// Ours is each of names (module-relative paths: "harness/meter") as an
// import path.
func Ours(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Module + n
	}
	return out
}

// Machinery are the packages that boot, sample, measure or scrape a
// point, or talk to its agents: the supervisor, the CPU sampling and
// attribution, the meter, the metrics scraper, the agents and a point's
// agent side, the calibrator, the network lab, and gopsutil.
func Machinery() []string {
	return append(Ours("harness/supervise", "harness/cpusample", "harness/attrib", "harness/meter",
		"harness/scrape", "harness/agents", "harness/agentside", "calibrate", "internal/netlab"),
		"github.com/shirou/gopsutil")
}

// Deciders are the pure packages that decide from what points measured:
// the verdict and the schedule.
func Deciders() []string { return Ours("harness/verdict", "harness/schedule") }

// Bans is the union of lists, for ImportsNone.
func Bans(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
