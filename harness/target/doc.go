// Package target reads and checks a target file: the server under test as
// benchmark/targets/*.json describes it (docs/targets.md).
//
// A Spec is data and checks only. It knows how to boot nothing and which
// sweep runs it not at all: the harness applies the sweep's knobs to it
// (a scenario file's ladder, --server-cmd, --url) while it resolves its
// Plan, and boots what Booted lists for every point.
//
// The pieces:
//
//   - spec.go: Spec and Server, Load (unknown fields refused by name),
//     Check for the fields together (a booted server, an external one, or
//     several named servers), CheckRunnable for one scenario, Durations.
//   - blocks.go: the scenarios' blocks (echo_url, fanout, nats, ...), kept
//     raw and parsed by the scenario that owns the key (load.TargetDef),
//     so a new scenario adds a block without a field here.
//   - addr.go: the placeholders a point fills ({port}, {port2}, {portN},
//     {host}, {addr}, {workdir}, a profile's {seconds}) and free loopback
//     ports for them.
//   - secrets.go: every secret a target holds (secret flags of its
//     command, marked env entries, block secrets), refused when too short
//     to redact.
//   - metrics.go: the "metrics" block's checks (format, URL, what it
//     may carry in its query).
package target
