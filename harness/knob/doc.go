// Package knob is every knob of `ceiling sweep`, as the user gives it:
// Options, the ladders, and the table (Knobs) that names each knob once.
//
// One row of the table is one knob: its make variable, its flag, its
// default as the docs write it, its help, how its text is parsed into
// Options and what its value must satisfy on its own. The environment
// (ApplyEnv), the CLI's flags and usage (KnobValue, FlagUsage), the
// per-knob checks (CheckKnobs) and the Knobs tables of docs/sweep.md and
// docs/compare.md (KnobDocTable, checked by TestKnobDocs) all read the
// table, so a knob is added, renamed or documented in one place.
//
// Options holds what the user asked for and nothing found later: the
// harness resolves it, with the target files and the machine, into its
// Plan (harness.Resolve), where every default that is not the table's is
// filled in with a note saying where it came from.
//
// Files: table.go (the Knob type, binding to flags, the docs tables),
// knobs.go (the rows; knobs_agents.go and knobs_compare.go hold the
// agents' and the two-arm sweep's), parse.go (the parse and check
// helpers the rows share), options.go (Options and its defaults),
// ladder.go (batch and connection ladders), compare.go (the two-arm
// sweep's defaults).
package knob
