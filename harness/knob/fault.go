package knob

import (
	"fmt"
	"strconv"
	"strings"
)

// Fault kinds (FAULT).
const (
	FaultKill = "kill" // SIGKILL: the node dies, its clients drop
	FaultStop = "stop" // SIGSTOP: the node freezes, its sockets stay open
)

// Fault is FAULT: a resilience point, run once after the sweep at the
// headline's rung, during which one server of a multi-server target is
// sent SIGKILL (kill) or SIGSTOP (stop) at Fraction of the measured
// window. The zero Fault is none.
type Fault struct {
	Kind     string
	Server   string  // a name in the target's servers
	Fraction float64 // of the window, 0 < f < 1
}

// IsZero reports whether no fault was asked for.
func (f Fault) IsZero() bool { return f.Kind == "" }

// String is the knob's text: kill:node2@0.5, or "" for none.
func (f Fault) String() string {
	if f.IsZero() {
		return ""
	}
	return f.Kind + ":" + f.Server + "@" + strconv.FormatFloat(f.Fraction, 'g', -1, 64)
}

// ParseFault reads KIND:NAME@FRACTION ("" is none).
func ParseFault(s string) (Fault, error) {
	if s == "" {
		return Fault{}, nil
	}
	kind, rest, ok := strings.Cut(s, ":")
	name, frac, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 {
		return Fault{}, fmt.Errorf("%q: want KIND:SERVER@FRACTION, e.g. kill:node2@0.5", s)
	}
	if kind != FaultKill && kind != FaultStop {
		return Fault{}, fmt.Errorf("%q: kind %q is not %s or %s", s, kind, FaultKill, FaultStop)
	}
	if name == "" {
		return Fault{}, fmt.Errorf("%q: no server name (one of the target's servers[].name)", s)
	}
	f, err := strconv.ParseFloat(frac, 64)
	if err != nil || !(f > 0 && f < 1) {
		return Fault{}, fmt.Errorf("%q: fraction %q of the window: want 0 < f < 1", s, frac)
	}
	return Fault{Kind: kind, Server: name, Fraction: f}, nil
}
