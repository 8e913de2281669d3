package harness

// The harness knows no scenario: its tests use the ones ceiling ships.
import _ "github.com/ceiling-bench/ceiling/load/scenario/all"
