package supervise

import "github.com/ceiling-bench/ceiling/harness/probe"

// Probe kinds (harness/probe).
const (
	ProbeTCP  = probe.TCP  // a TCP connect to Addr succeeds
	ProbeHTTP = probe.HTTP // GET URL answers 2xx
	ProbeLog  = probe.Log  // Regexp matches the process's log file
)

// Probe is a parsed readiness probe (harness/probe). *Probe implements
// flag.Value.
type Probe = probe.Probe

// ParseProbe reads a readiness probe: probe.Parse.
func ParseProbe(s string) (Probe, error) { return probe.Parse(s) }
