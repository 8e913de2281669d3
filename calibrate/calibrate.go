package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ceiling-bench/ceiling/internal/capfile"
	"github.com/ceiling-bench/ceiling/internal/wire"
)

// Version is Doc.Version: bump it when a field changes meaning.
const Version = wire.CalibrationVersion

// Thresholds of the ramp and of the sweep's flag.
const (
	// SaturatedBusy is the share of its cores above which the generator
	// counts as saturated.
	SaturatedBusy = 0.90
	// PlateauGain: a saturated step that gained less than this over the
	// previous one ends the ramp.
	PlateauGain = 0.05
	// MinProjectBusy: a step below this share of its cores is too short
	// of CPU ticks to project a cap from.
	MinProjectBusy = 0.10
	// ContendedDelay is the load threads' run delay (a fraction of their
	// runnable time, generator.load_threads) from which a step's
	// generator counts as sharing its core.
	ContendedDelay = 0.10
	// SinkBusy is the share of its cores above which the sink may have
	// limited a step (Cap.SinkLimited).
	SinkBusy = 0.90
	// NearCapPct is how close to the calibrated cap (in percent of it) a
	// sweep point's throughput may come before it is flagged
	// (wire.NearCapPct says why 15%).
	NearCapPct = wire.NearCapPct
)

// The calibration document (what `ceiling calibrate` writes and `ceiling
// sweep` records in meta.calibration) is defined in internal/wire: the
// sweep's result document carries it, and the publisher reads it.
type (
	Doc     = wire.Doc
	Failure = wire.Failure
	Cap     = wire.Cap
	Step    = wire.Step
	Skipped = wire.Skipped
)

// Calibrated are the scenarios with a null sink.
var Calibrated = wire.Calibrated

// SkipReason says why a scenario has no null sink ("" when it has one).
func SkipReason(scenario string) string { return wire.SkipReason(scenario) }

// NearCap reports whether throughput with generatorCores cores is within
// pct percent of the cap (PerCorePerS x generatorCores) or above it, and
// the scaled cap.
func NearCap(c Cap, generatorCores int, throughput, pct float64) (bool, float64) {
	return wire.NearCap(c, generatorCores, throughput, pct)
}

// ReadFile reads and validates a calibration document; errors name the
// file and the field.
func ReadFile(path string) (*Doc, error) {
	b, err := capfile.Read("calibration document", path, capfile.Config)
	if err != nil {
		return nil, err
	}
	var d Doc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}
