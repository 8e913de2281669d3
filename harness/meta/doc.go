// Package meta is what the result document says about the run's
// circumstances, taken once before its first point: where it ran
// (Runner: the CI runner, from its environment), with what (Generator:
// the generator's name), against what (Target: the target as recorded,
// for meta.target and meta.base_target) and on which CPUs as asked
// (Pinning, with PinningWarnings for sets that overlap or share a core).
//
// A reader compares two documents by these fields before their figures:
// two runs on other runners, generators or pinnings do not measure the
// same thing. So each is recorded as the run asked for it, before
// anything boots; what the machine then granted (the affinities, the
// file limit) the harness adds at the end, with a warning where it
// differs.
//
// The package reads the knobs, the target and this machine's CPU
// topology (pinning); it never links what boots, measures or judges a
// point (TestMetaLinksNoRunner).
package meta
