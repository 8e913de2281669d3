package agents

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/internal/argv"
	"github.com/ceiling-bench/ceiling/load"
)

// Plan is one point for the coordinator.
type Plan struct {
	Agents      int      // agents that run it (Active of the N asked for)
	Args        []string // the point's `ceiling load` flags (whole: --connections C, --rate R)
	Connections int
	Rate        float64 // 0: closed loop
	Warmup      time.Duration
	Duration    time.Duration
	Marker      string // created at the common window's start ("" for none)
	JSON        string // the merged load.Result is written here ("" for none)

	// AgentArgs, when set, are extra `ceiling load` flags for agent i of
	// conns connections (the harness's own source addresses per agent).
	AgentArgs func(i, conns int) []string

	Samples      int           // clock samples per agent (default 8)
	ReadyTimeout time.Duration // start of Run to every agent ready (default 60 s)
	MaxStartSkew time.Duration // an agent whose window opened later is late (default 50 ms)
	// ResultTimeout is how long after the window's end every result must
	// be in (default 30 s plus load.Drain).
	ResultTimeout time.Duration
	Lead          time.Duration // barrier to load start, at least (default 200 ms)
	Log           io.Writer
}

func (p *Plan) defaults() {
	if p.Samples <= 0 {
		p.Samples = 8
	}
	if p.ReadyTimeout <= 0 {
		p.ReadyTimeout = 60 * time.Second
	}
	if p.MaxStartSkew <= 0 {
		p.MaxStartSkew = 50 * time.Millisecond
	}
	if p.ResultTimeout <= 0 {
		p.ResultTimeout = 30*time.Second + load.Drain
	}
	if p.Lead <= 0 {
		p.Lead = 200 * time.Millisecond
	}
	if p.Log == nil {
		p.Log = io.Discard
	}
}

// Outcome is what the coordinator made of a point: the merged result and
// every agent's report (also when the point is invalid: what is known).
type Outcome struct {
	Merged *load.Result
	Agents []Agent
	// reports are the agents' whole reports, histograms included (for
	// this package's tests).
	reports []*Report
	// WindowStart is the planned start of the common window.
	WindowStart time.Time
}

// InvalidError is a point the agents could not measure together: a
// missing, late or failed agent, or a merge that would not be exact.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "agents: " + e.Reason }

func invalid(format string, a ...any) error { return &InvalidError{Reason: fmt.Sprintf(format, a...)} }

// LateStartError is a point every agent measured, merged, in which some
// agent's "started" arrived more than MaxStartSkew after the common start
// (their reports say LateStart). Run returns it with the whole Outcome:
// either that agent's clock was off, and the point is invalid, or it was
// starved of CPU, and its own result shows it fell behind its schedule,
// which makes the point generator-capped naming it. The caller, which
// holds the verdict rule, decides.
type LateStartError struct{ InvalidError }

func (e *LateStartError) Unwrap() error { return &e.InvalidError }

// Coordinator runs one point's agents on a hub of its own: the agents
// are told done after the point (the harness starts them per point).
type Coordinator struct {
	hub  *Hub
	plan Plan
}

// Listen opens the coordinator's port (addr "127.0.0.1:0" for any), for
// agents that prove token.
func Listen(addr string, plan Plan, token Token) (*Coordinator, error) {
	if plan.Agents < 1 {
		return nil, fmt.Errorf("agents: %d agents", plan.Agents)
	}
	h, err := NewHub(addr, plan.Agents, token, plan.Log, nil)
	if err != nil {
		return nil, err
	}
	return &Coordinator{hub: h, plan: plan}, nil
}

// Addr is the address agents dial.
func (c *Coordinator) Addr() string { return c.hub.Addr() }

// Run runs the point, then tells the agents done.
func (c *Coordinator) Run(ctx context.Context) (*Outcome, error) {
	defer c.hub.Close()
	return c.hub.Run(ctx, c.plan)
}

// evLost is an event: a session's connection ended before ready.
const evLost = "lost"

// event is one thing an agent's session reported.
type event struct {
	index int
	typ   string // tReady, tStarted, tResult, or "" for an error
	body  any
	at    int64 // coordinator wall ns at arrival
	err   error
}

type session struct {
	c     *conn
	index int
	goCh  chan *Go

	// mu orders the point's welcome against its abort: an agent is told
	// abort only of a point it was welcomed to, and never welcomed after
	// the abort. (Sent the other way round, the agent took the abort for
	// its previous point's, started the dead one, and read the next
	// point's welcome where it wanted a pong.)
	mu       sync.Mutex
	welcomed bool // the welcome was sent
	aborted  bool // the point failed: no welcome may follow
}

// welcome sends the point's welcome, unless the point was aborted
// first (false, nil: the agent never hears of it).
func (s *session) welcome(w *Welcome) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted {
		return false, nil
	}
	if err := s.c.send(tWelcome, w); err != nil {
		return false, err
	}
	s.welcomed = true
	return true, nil
}

// abort tells the agent the point failed, if it was welcomed to it; one
// not welcomed yet never will be, and is told nothing.
func (s *session) abort(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	if !s.welcomed {
		return
	}
	_ = s.c.c.SetWriteDeadline(time.Now().Add(time.Second))
	_ = s.c.send(tAbort, &Abort{Reason: reason})
}

// SegmentArgs is the point's flags for agent i of n: its --connections
// and --rate, without --measure-marker and --json (the coordinator's).
func SegmentArgs(args []string, conns int, rate float64, n, i int) []string {
	c, r := Segment(conns, rate, n, i)
	out := make([]string, 0, len(args)+4)
	for j := 0; j < len(args); j++ {
		a := args[j]
		name, _, inline, isFlag := argv.Flag(a)
		if !isFlag {
			out = append(out, a)
			continue
		}
		switch name {
		case "connections", "rate", "measure-marker", "json":
			if !inline {
				j++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	out = append(out, "--connections", strconv.Itoa(c))
	if rate > 0 {
		out = append(out, "--rate", strconv.FormatFloat(r, 'g', -1, 64))
	}
	return out
}

// LoopbackSourceAddrs gives each agent source addresses of its own against
// a loopback server, as separate hosts would have: agent i dials from
// 127.0.(i+1).1 and as many more of that /24 as its connections need at
// half the ephemeral port range each (--source-addrs, load/source.go).
// Nil when the point's flags already have --source-addrs (SOURCE_ADDRS),
// or the server is not on loopback (its addresses are not ours to pick).
func LoopbackSourceAddrs(args []string, url string, portRange int) func(i, conns int) []string {
	if slices.Contains(args, "--source-addrs") || !loopbackURL(url) {
		return nil
	}
	return func(i, conns int) []string {
		if i >= 254 {
			return nil // no /24 of its own left: the kernel picks
		}
		n := AddrCount(conns, portRange, 1, 254)
		return []string{"--source-addrs", fmt.Sprintf("127.0.%d.1-127.0.%d.%d", i+1, i+1, n)}
	}
}

// loopbackURL reports whether url's host is an IPv4 loopback address or
// localhost.
func loopbackURL(raw string) bool {
	u, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.Is4() && a.IsLoopback()
}

// AddrCount is how many source addresses an agent of conns connections
// gets over a port range of portRange ports: enough that no address
// carries more than half the range (the other half is room for the
// TIME_WAIT sockets of earlier points), at least least and at most most.
func AddrCount(conns, portRange, least, most int) int {
	per := max(portRange/2, 1)
	return min(max(least, (conns+per-1)/per), most)
}
