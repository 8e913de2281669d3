package load

import (
	"os"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// The generator's own memory (generator.memory): read before the first
// connection and at the window's edges, so that the harness can measure
// what each connection costs the generator as a slope from that
// baseline, the way it measures the server's. A harness cannot read the
// baseline itself: by the time it sees the process, the process may
// already be connecting.

// readSelfMemory reads this process's memory; zero when it cannot be
// read (not Linux).
func readSelfMemory() procfs.Memory {
	m, err := procfs.ReadMemory(os.Getpid())
	if err != nil {
		return procfs.Memory{}
	}
	return m
}

// selfMemory is the report of three readings: before connecting, and at
// the window's start and end. It is in PSS when all three read it, else
// in RSS; nil when any of them read nothing.
func selfMemory(before, start, end procfs.Memory) *SelfMemory {
	if before.RSSBytes == 0 || start.RSSBytes == 0 || end.RSSBytes == 0 {
		return nil
	}
	if before.HasPSS && start.HasPSS && end.HasPSS {
		return &SelfMemory{Measure: "pss", BeforeConnectBytes: before.PSSBytes, WindowStartBytes: start.PSSBytes, WindowEndBytes: end.PSSBytes}
	}
	return &SelfMemory{Measure: "rss", BeforeConnectBytes: before.RSSBytes, WindowStartBytes: start.RSSBytes, WindowEndBytes: end.RSSBytes}
}
