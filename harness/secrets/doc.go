// Package secrets is what a sweep hides, and where: every secret it
// knows, gathered once before anything boots, then masked in each thing
// it writes (internal/redact holds the masking itself: the Set, its
// forms, the rule on short secrets).
//
// Gather collects them: the target's (its fan-out secret, the env
// entries and literals it marks secret, the secret flags' values of its
// command or --server-cmd), the secret flags' values of GENERATOR, and
// the secret-named variables of the harness's environment, which the
// server inherits. A secret given to the sweep that is too short to hide
// is an error before anything boots (exit 2, naming where it came from);
// a short one in the environment is not the sweep's to fix, and a note
// names the variable, never its value.
//
// Then every way out of the sweep passes through the Set:
//
//   - the result document: result.RedactResult, before each write;
//   - stdout and stderr (the table, progress, warnings): NewWriter, which
//     masks each Write; the harness writes a line per call, so no secret
//     is split across two;
//   - each point's files (the servers' and the generator's logs, its
//     JSON): RedactFile once the point's processes are gone, line by line
//     (a secret spans no newline), through a temporary file renamed over
//     the log, so a reader never sees half of one.
//
// The package reads the knobs and the target file, and writes files; it
// never links what boots, measures or judges a point (TestSecretsLinkNoRunner).
package secrets
