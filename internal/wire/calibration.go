package wire

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// CalibrationVersion is Doc.Version: bump it when a field changes meaning.
const CalibrationVersion = 1

// NearCapPct is how close to the calibrated cap (in percent of it) a
// sweep point's throughput may come before it is flagged: 15% is well
// above the A-A noise floor of a quiet run (6.2%, docs/sweep.md), so a
// point flagged is near the cap beyond the noise.
const NearCapPct = 15.0

// How the null sink writes its replies (Doc.SinkWrites,
// calibrate.Config.SinkWrites).
const (
	// WritesBatched: the replies one read calls for in one write(2), so
	// the server side costs as little as it can.
	WritesBatched = "batched"
	// WritesPerMessage: one write(2) per reply, as most servers write, so
	// the generator's receive path gets a segment per message, as it does
	// against them; the sink then costs about what the generator does.
	WritesPerMessage = "per-message"
)

// Doc is what `ceiling calibrate` writes and `ceiling sweep` records in
// meta.calibration.
type Doc struct {
	Version       int       `json:"calibration_version"`
	MeasuredAt    time.Time `json:"measured_at"`
	Generator     string    `json:"generator"` // the generator's command name
	GeneratorCPUs []int     `json:"generator_cpus"`
	SinkCPUs      []int     `json:"sink_cpus"`
	SinkWrites    string    `json:"sink_writes"` // WritesBatched | WritesPerMessage
	RecordSize    int       `json:"record_size"`
	DurationNs    int64     `json:"duration_ns"` // each step's window
	WarmupNs      int64     `json:"warmup_ns"`
	Caps          []Cap     `json:"caps"`
	// Skipped are the scenarios asked for that have no null sink, and why.
	Skipped []Skipped `json:"skipped"`
	// Failed are the (scenario, batch) pairs whose every step failed.
	Failed []Failure `json:"failed,omitempty"`
}

// Failure is a (scenario, batch) calibrate could not measure.
type Failure struct {
	Scenario string `json:"scenario"`
	Batch    int    `json:"batch"`
	Reason   string `json:"reason"`
}

// Cap is one (scenario, batch): the generator's messages per second per
// core at its best step.
type Cap struct {
	Scenario string `json:"scenario"`
	Batch    int    `json:"batch"`
	// PerCorePerS is the cap: with Saturated, the best step's
	// throughput over the generator's cores; without (the generator never
	// had its cores to itself, e.g. on a shared machine), PerCPUSecond,
	// and Projected says so.
	PerCorePerS float64 `json:"msgs_per_s_per_core"`
	// MeasuredPerS is the best step's throughput over the generator's
	// cores, as measured.
	MeasuredPerS float64 `json:"measured_msgs_per_s_per_core"`
	// PerCPUSecond is the best step's throughput over the generator's CPU
	// use (messages per generator CPU-second): what a fully busy core
	// drives at that step's efficiency.
	PerCPUSecond float64 `json:"msgs_per_cpu_s"`
	Projected    bool    `json:"projected"`
	Connections  int     `json:"connections"`    // of the best step
	Busy         float64 `json:"generator_busy"` // its cores' busy fraction at the best step
	// Saturated: the best step had the generator busy >= calibrate.SaturatedBusy.
	// False: the ramp ran out first, and the cap is a lower bound.
	Saturated bool `json:"saturated"`
	// SinkLimited: the sink was busy >= calibrate.SinkBusy at the best step, so it
	// may have held the generator back (a lower bound too).
	SinkLimited bool `json:"sink_limited"`
	// Contended: the load threads waited for a CPU at least
	// calibrate.ContendedDelay of their runnable time at the best step: other work shared its
	// core, which is why it could not saturate it (the cap is then
	// Projected).
	Contended bool   `json:"contended"`
	Steps     []Step `json:"steps"`
}

// Step is one generator run of the ramp.
type Step struct {
	Connections    int     `json:"connections"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	GeneratorCores float64 `json:"generator_cores"`
	// RunDelay is the share of their runnable time the threads that
	// carried the load waited for a CPU (generator.load_threads
	// .run_delay_fraction); 0 for a generator that does not report it.
	// Not the sum over every thread (os_run_delay_ns): idle runtime
	// threads and sysmon fill that on a quiet core.
	RunDelay  float64 `json:"generator_run_delay"`
	SinkCores float64 `json:"sink_cores"`
	Errors    int64   `json:"errors"`
	Error     string  `json:"error,omitempty"`
}

// Skipped is a scenario calibrate cannot measure.
type Skipped struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// Calibrated are the scenarios with a null sink.
var Calibrated = []string{"echo"}

// SkipReason says why a scenario has no null sink ("" when it has one).
func SkipReason(scenario string) string {
	switch {
	case slices.Contains(Calibrated, scenario):
		return ""
	case scenario == "fanout":
		return "fanout counts deliveries of events the generator published itself over signed REST: a null sink would have to be a Pusher server (handshake, REST, fan-out); make bench section 1 measures its receive path"
	}
	return scenario + " needs a protocol server to answer it (no null sink): not calibrated"
}

// CapFor is the cap recorded for (scenario, batch).
func (d *Doc) CapFor(scenario string, batch int) (Cap, bool) {
	if d == nil {
		return Cap{}, false
	}
	for _, c := range d.Caps {
		if c.Scenario == scenario && c.Batch == batch {
			return c, true
		}
	}
	return Cap{}, false
}

// NearCap reports whether throughput with generatorCores cores is within
// pct percent of the cap (PerCorePerS x generatorCores) or above it, and
// the scaled cap.
func NearCap(c Cap, generatorCores int, throughput, pct float64) (bool, float64) {
	limit := c.PerCorePerS * float64(max(generatorCores, 1))
	if limit <= 0 || throughput <= 0 {
		return false, limit
	}
	return throughput >= limit*(1-pct/100), limit
}

// Validate checks a document read from a file; errors name the field.
func (d *Doc) Validate() error {
	if d.Version != CalibrationVersion {
		return fmt.Errorf("calibration_version: %d, want %d", d.Version, CalibrationVersion)
	}
	if d.RecordSize < 1 {
		return fmt.Errorf("record_size: %d is not a positive size", d.RecordSize)
	}
	if len(d.GeneratorCPUs) == 0 {
		return errors.New("generator_cpus: empty")
	}
	if w := d.SinkWrites; w != "" && w != WritesBatched && w != WritesPerMessage {
		return fmt.Errorf("sink_writes: %q, want %s or %s", w, WritesBatched, WritesPerMessage)
	}
	seen := map[[2]any]bool{}
	for i, c := range d.Caps {
		switch {
		case c.Scenario == "":
			return fmt.Errorf("caps[%d].scenario: empty", i)
		case c.Batch < 1:
			return fmt.Errorf("caps[%d].batch: %d is not a positive batch", i, c.Batch)
		case !(c.PerCorePerS > 0) || math.IsInf(c.PerCorePerS, 0):
			return fmt.Errorf("caps[%d].msgs_per_s_per_core: %v is not a positive rate", i, c.PerCorePerS)
		case seen[[2]any{c.Scenario, c.Batch}]:
			return fmt.Errorf("caps[%d]: a second cap for %s batch %d", i, c.Scenario, c.Batch)
		}
		seen[[2]any{c.Scenario, c.Batch}] = true
	}
	return nil
}
