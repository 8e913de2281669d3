// Package progress is what a sweep prints on stderr while it runs: one
// line before the first point (Plan: how many points, of what, and the
// load time they hold for certain) and one before each point (Point, and
// Arm for a two-arm sweep's: which point of how many, its batch,
// connections and repeat, the time elapsed and an estimate of the time
// left).
//
// The estimate is the mean wall time of the points done so far times the
// points left; before the first point ends there is none ("?"). It is not
// made from the plan's load time, which leaves out each point's boot and
// stop: those are measured, once a point has paid them.
//
// The lines are for a person watching a run; the result document holds
// everything they say. The package is pure: the caller passes the time
// elapsed, and every line goes to the writer it is given
// (TestProgressIsPure).
package progress
