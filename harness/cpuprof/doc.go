// Package cpuprof profiles a point's servers over its measured window,
// for a two-arm sweep's "why is it slower" (issue 50, docs/compare.md),
// and turns the profiled points of both arms into the result's
// comparison.headline.profile_diff.
//
// A point is profiled only where its spec asks (harness.PointSpec
// Profile): the extra blocks a two-arm sweep runs after its verdict, so
// that profiling never perturbs the blocks that decided. Its servers are
// sampled one of two ways:
//
//   - the target's "profile" URL, where it names one (Go's
//     /debug/pprof/profile?seconds={seconds}): fetched over the window,
//     as --profile does, into the point's directory;
//   - otherwise `perf record -e cpu-clock -g` on the servers' processes.
//     cpu-clock is a software timer, so no PMU is needed (most VMs and CI
//     runners have none). perf starts with its events disabled, on a
//     control FIFO (--control, -D -1): it attaches while the window has
//     begun, and samples from its "enable" acknowledged to its "disable"
//     acknowledged, a span Recording measures, so the messages the
//     server handled are counted over exactly the time sampled.
//
// Whether perf can run is decided once, before a point starts it, by
// Check over an Env (the seam a unit test scripts): perf missing from
// PATH, or not permitted (kernel.perf_event_paranoid 3 or more for a user
// other than root, where Debian refuses every unprivileged use) gives a
// reason; at 2 a user other than root samples user space only
// (cpu-clock:u). perf failing all the same gives its own words. A profile
// that could not be taken is recorded as a reason on the point
// (result.CPUProfile) and never fails the point nor the verdict.
//
// Diff runs once the profiled blocks ran: it symbolises each recording
// (`perf script`, through the Env; pprof carries its own symbols),
// parses it (internal/profdiff), compares the arms per message handled,
// writes each arm's folded stacks and the differential flame graph, and
// returns the result's ProfileDiff, or one whose Reason says why there
// is none.
package cpuprof
