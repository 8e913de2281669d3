package knob

// SCENARIO names a registered scenario: the registry, in full.
import _ "github.com/ceiling-bench/ceiling/load/scenario/all"
