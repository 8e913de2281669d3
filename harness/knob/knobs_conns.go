package knob

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The connection-scale sweep's knobs (SCENARIO=connections, docs/sweep.md
// "The connection-scale sweep") and the memory its limit check plans for,
// after runKnobs in the table.
const (
	// ConnectionsScenario is the scenario whose load is its connections
	// (load/scenario/connections): CONN_RAMP and CONN_INTERVAL are its
	// --ramp and --send-interval.
	ConnectionsScenario = "connections"
	// DefaultConnRamp and DefaultConnInterval are its defaults.
	DefaultConnRamp     = 5000
	DefaultConnInterval = 10 * time.Second
	// DefaultServerConnBytes is SERVER_CONN_BYTES's default
	// (harness/limits.DefaultServerBytesPerConn).
	DefaultServerConnBytes = 64 << 10
)

var connKnobs = []Knob{
	{
		Env: "CONN_RAMP", Flag: "conn-ramp", Arg: "N", Default: "`5000`",
		Help: "`SCENARIO=connections`: connections opened a second, over all of them (split over AGENTS), so that the time to open a rung is stated; `0`: as fast as the bounded connects go",
		Parse: func(o *Options, _, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a number of connections a second", v)
			}
			o.ConnRamp = f
			return nil
		},
		// Written so that NaN fails too. A ramp set for another scenario
		// is Resolve's to refuse (it depends on SCENARIO).
		Check: func(o *Options) error {
			if !(o.ConnRamp >= 0) || o.ConnRamp > 1e9 {
				return fmt.Errorf("%g is not a ramp of 0 to 1e9 connections a second", o.ConnRamp)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.FormatFloat(o.ConnRamp, 'g', -1, 64) },
	},
	func() Knob {
		k := durationKnob("CONN_INTERVAL", "conn-interval", "`10s`", "`SCENARIO=connections`: each connection sends one message (RECORD_SIZE bytes) this often, on its own schedule, and the round trip is timed where the server echoes; the window should hold at least one interval",
			func(o *Options) *time.Duration { return &o.ConnInterval }, false)
		check := k.Check
		k.Check = func(o *Options) error {
			if err := check(o); err != nil {
				return err
			}
			if o.ConnInterval < time.Millisecond {
				return fmt.Errorf("%v is under 1ms", o.ConnInterval)
			}
			return nil
		}
		return k
	}(),
	{
		Env: "SERVER_CONN_BYTES", Flag: "server-conn-bytes", Arg: "BYTES", Default: "`65536` (64 KiB)",
		Help: "the server's memory per connection that the check before boot plans for (with the generator's 3 KiB and the kernel's 8 KiB): a ladder whose top rung would need more than MemAvailable exits 2 (see \"Limits that cap a ladder\"); `65536`, `64KiB`, `1MiB`",
		Parse: func(o *Options, _, v string) error {
			n, err := ParseBytes(v)
			if err == nil {
				o.ServerConnBytes = n
			}
			return err
		},
		Get: func(o *Options) string { return strconv.FormatUint(o.ServerConnBytes, 10) },
	},
}

// ParseBytes reads a positive byte count, plain or with a KiB, MiB or
// GiB suffix (64KiB), as refserver's flags take them.
func ParseBytes(s string) (uint64, error) {
	num, mult := strings.TrimSpace(s), uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if v, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	switch {
	case err != nil || n == 0:
		return 0, fmt.Errorf("%q is not a positive byte count like 65536, 64KiB or 1MiB", s)
	case n > math.MaxUint64/mult:
		return 0, errors.New("too large")
	}
	return n * mult, nil
}
