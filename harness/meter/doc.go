// Package meter measures one point's window: what each side of the sweep
// used of its pinned CPUs, and who else used them.
//
// # A window
//
// A point's window is the interval the generator measures over, from the
// moment it creates its measure marker until the window's duration has
// passed (or a side ended early). The harness calls Meter.Start as the
// window opens and Run.Stop as it ends; in between the Meter samples
// and scans, and nothing else. What Stop returns is a Window: the raw
// readings, not yet judged.
//
// # The two sides
//
// Every point has two sides, each pinned to its own CPU set: the server
// (one process tree, or several booted side by side and sampled at the
// same instants, with their sum) and the generator (its tree, or the
// local agents' trees as one side). For each side a Window holds:
//
//   - its process trees' CPU (harness/cpusample): how many cores the
//     side's own processes used;
//   - its pinned cores' counters at both ends (CoreSnap, /proc/stat):
//     how busy the cores were with anything at all, and how much of their
//     time the hypervisor gave another guest (steal);
//   - who ran on those cores (harness/attrib), task by task: the server,
//     the generator, the harness, kernel threads, or foreign.
//
// An external server is nobody's child here: nothing of it is sampled
// (Window.External), and the harness reads its CPU from its metrics.
//
// # Contention, and the sweep's own work
//
// A point is contended when other work shared a side's pinned CPUs: a
// foreign process, or a hypervisor's steal. A side's tree alone cannot see
// a core full of someone else's work, and a core's busy time alone cannot
// tell whose it was, which is why a window holds all three readings.
// Not everything on a side's cores that is not its own tree is
// contention: the harness's sampling, the kernel's share of the sweep's
// own packets, and, where the two sets overlap (ALLOW_OVERLAP, or a
// one-CPU machine), the other side's use of the shared cores are the
// sweep's own work. Sides records them as such (the attribution's
// server, generator, harness and kernel shares; OverlapCores), so that
// the rule over them (result.Contention, docs/sweep.md "Contention")
// counts only what is foreign, and steal.
//
// # Why Sides is pure
//
// Sides turns a Window into each side's result.CPUStats: the figures the
// verdict and the contention rule read and the result document records.
// It reads no clock, no /proc and no process, so every rule over a
// window is a function of a Window, and is tested on windows a real
// Meter recorded (testdata/windows: quiet ones, and ones with a busy loop
// or a build on a side's CPU), each with its golden answer and the rule's
// assertions beside it (go test -run TestSidesOfRecordedWindows
// -update-windows rewrites the golden files). Only Proc, the real Meter,
// touches the machine; the harness takes any Meter (harness.Deps.Meter),
// so its own tests can hand it windows without a process.
//
// The package knows nothing of the harness that calls it: it never
// imports it, nor what boots, judges or schedules a point (its
// TestMeterMeasuresOnly checks it).
package meter
