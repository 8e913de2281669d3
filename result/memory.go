package result

import "fmt"

// Memory measures (Memory.Measure): PSS counts a page shared by n
// processes 1/n in each, so a process tree's sum counts it once; RSS
// counts it in every process that maps it.
const (
	MemoryPSS = "pss" // /proc/PID/smaps_rollup Pss
	MemoryRSS = "rss" // /proc/PID/status VmRSS, where smaps_rollup could not be read
)

// Memory is one side's memory over a point's measured window: the
// server's (the sum of its processes' trees, each server of several in
// Servers) or the generator's (docs/efficiency.md, "Memory per
// connection").
type Memory struct {
	// Measure is MemoryPSS, or MemoryRSS where a process's smaps_rollup
	// could not be read; every bytes figure below but RSSPeakBytes is in
	// it.
	Measure string `json:"measure"`
	// Samples is the readings over the window (one a second, and one at
	// each end).
	Samples int `json:"samples"`
	// PeakBytes and EndBytes are the largest reading over the window and
	// the last; RSSPeakBytes is the largest RSS, whatever the measure (the
	// "largest resident memory" other tools report; absent where only
	// the PSS was read, by a generator reporting its own).
	PeakBytes    uint64 `json:"peak_bytes"`
	EndBytes     uint64 `json:"end_bytes"`
	RSSPeakBytes uint64 `json:"rss_peak_bytes,omitempty"`
	// BaselineBytes is the memory before any connection: the server's
	// read after it was ready and before the generator started, the
	// generator's as it reported it before connecting. Nil when none was
	// read (Why says so).
	BaselineBytes *uint64 `json:"baseline_bytes"`
	// Connections is the connections open over the window, the divisor
	// of PerConnectionBytes.
	Connections int `json:"connections"`
	// PerConnectionBytes is (PeakBytes - BaselineBytes) / Connections: a
	// slope, not memory / connections. Below zero when the side gave
	// memory back after its baseline (kept, never clamped); nil without a
	// baseline or a connection (Why says so).
	PerConnectionBytes *float64 `json:"per_connection_bytes"`
	// Why says why a figure above is missing; empty when none is.
	Why string `json:"why,omitempty"`
	// Servers are each server's own, of a target of several, in boot
	// order (the sum above).
	Servers []NamedMemory `json:"servers,omitempty"`
}

// NamedMemory is one server's memory, of a target of several.
type NamedMemory struct {
	Name string `json:"name"`
	Memory
}

// PerConnection is the figure per connection, and whether there is one.
func (m *Memory) PerConnection() (float64, bool) {
	if m == nil || m.PerConnectionBytes == nil {
		return 0, false
	}
	return *m.PerConnectionBytes, true
}

// SetPerConnection fills Connections and PerConnectionBytes from the
// peak and the baseline (or Why, when one of them is missing).
func (m *Memory) SetPerConnection(conns int) {
	m.Connections = conns
	m.PerConnectionBytes = nil
	switch {
	case m.BaselineBytes == nil:
		if m.Why == "" {
			m.Why = "no baseline before the connections: no figure per connection"
		}
	case conns <= 0:
		m.Why = "no connection was open: no figure per connection"
	default:
		v := (float64(m.PeakBytes) - float64(*m.BaselineBytes)) / float64(conns)
		m.PerConnectionBytes = &v
	}
}

// Bytes writes a byte count the way the tables do: 1.20 GB, 340 MB,
// 18.5 KB, 512 B (decimal units, 3 significant figures).
func Bytes(v float64) string { return scaled(v, " GB", " MB", " KB", " B", sig3) }

// ShortBytes is Bytes for a narrow column: 167K, 1.2M, 512 (no space,
// one-letter units, at most 5 characters for any figure below 1 TB).
func ShortBytes(v float64) string { return scaled(v, "G", "M", "K", "", short) }

// scaled writes v in the largest decimal unit it reaches (giga, mega,
// kilo, or none), the figure by digits.
func scaled(v float64, g, m, k, none string, digits func(float64) string) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e9, g}, {1e6, m}, {1e3, k}} {
		if v >= u.div {
			return sign + digits(v/u.div) + u.unit
		}
	}
	return fmt.Sprintf("%s%.0f%s", sign, v, none)
}

// sig3 is v (>= 1) with three significant figures.
func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// short is v (>= 1) in at most three characters.
func short(v float64) string {
	if v >= 9.95 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
