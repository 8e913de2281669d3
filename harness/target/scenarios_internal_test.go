package target

// The scenarios whose blocks a target file may hold.
import _ "github.com/ceiling-bench/ceiling/load/scenario/all"
