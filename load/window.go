package load

// Window is the measured interval on the mono clock. Load starts at Open
// (every connection open and subscribed); the warm-up runs from Open to
// Start and is excluded from every statistic; End = Start + --duration. A
// sample counts when its operation was scheduled (open loop) or sent
// (closed loop) in [Start, End); operations in flight at End are still
// awaited, up to Drain after End.
type Window struct {
	Open, Start, End, Drain int64
}

// In reports whether an operation scheduled or sent at t is measured.
func (w Window) In(t int64) bool { return t >= w.Start && t < w.End }

func NewWindow(open int64, c *Config, drain int64) Window {
	start := open + c.WarmupNs
	return Window{Open: open, Start: start, End: start + c.DurationNs, Drain: start + c.DurationNs + drain}
}
