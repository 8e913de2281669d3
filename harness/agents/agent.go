package agents

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// AgentConfig is what `ceiling agent` needs.
type AgentConfig struct {
	Coordinator string // host:port the agent dials
	Index       int    // its segment, 0..N-1
	// Token is what the agent and the coordinator prove to each other
	// before anything else is said (auth.go).
	Token Token
	// TLS, when set (TLSFiles.ClientConfig), wraps each connection to the
	// coordinator: the agent then talks only to a coordinator whose
	// certificate the CA signed for the address it dials.
	TLS *tls.Config
	// WallSkew shifts this agent's wall clock (test only): the window must
	// still line up, since the offset it measures absorbs the shift.
	WallSkew time.Duration
	// DialTimeout bounds finding the coordinator (it may come up after
	// the agent, as a pod does).
	DialTimeout time.Duration
	// Parse turns the point's `ceiling load` flags into a Config (the
	// CLI's own flag set, so an agent accepts exactly what `ceiling load`
	// does). Its error is a bad flag.
	Parse func(args []string) (load.Config, error)
	// Rejoin is how many times in a row the agent redials a coordinator
	// whose connection ended between points (0: exit on the first).
	Rejoin int
	// RejoinWait is the pause before a redial (default 500 ms).
	RejoinWait time.Duration
	Version    string
	Log        io.Writer // progress; nil for none
}

// IndexFromEnv is the agent index of a Kubernetes Indexed Job's pod
// (JOB_COMPLETION_INDEX), when set.
func IndexFromEnv(getenv func(string) string) (int, bool, error) {
	v := getenv("JOB_COMPLETION_INDEX")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, true, fmt.Errorf("JOB_COMPLETION_INDEX: %q is not an index", v)
	}
	return n, true, nil
}

// BadArgsError is the coordinator's flags refused by the agent's parser.
type BadArgsError struct{ Err error }

func (e *BadArgsError) Error() string { return "the point's flags: " + e.Err.Error() }
func (e *BadArgsError) Unwrap() error { return e.Err }

// RunAgent is an agent's whole session: it joins the coordinator and runs
// point after point (join, clock, segment on the common window, result)
// until the coordinator says done. A connection lost between points (or
// closed by the coordinator after a failed point) is redialed, at most
// ac.Rejoin times in a row. Every failure within a point is also sent to
// the coordinator (as a result with its failure), so the point names this
// agent; the agent itself goes on to the next point.
func RunAgent(ctx context.Context, ac AgentConfig) error {
	ac, err := ac.withDefaults()
	if err != nil {
		return err
	}
	points := 0
	var lastPoint error // the last point's own failure
	var rj rejoins
	for {
		nc, err := dialRetry(ctx, ac.Coordinator, ac.DialTimeout, ac.TLS)
		if err != nil {
			if points > 0 || rj.lost > 0 {
				return fmt.Errorf("rejoin: %w", err)
			}
			return err
		}
		done, measured, err := agentSession(ctx, ac, nc, &points, &lastPoint)
		nc.Close()
		if done {
			fmt.Fprintf(ac.Log, "agent %d: done after %d points\n", ac.Index, points)
			var bad *BadArgsError
			if errors.As(lastPoint, &bad) {
				return bad // the coordinator's flags were refused: exit 2
			}
			return nil
		}
		var refused *RefusedError
		var auth *CoordinatorAuthError
		if errors.As(err, &refused) || errors.As(err, &auth) || ctx.Err() != nil {
			return err
		}
		wait, err := rj.next(ac, err, measured, lastPoint)
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// withDefaults is ac with its log, dial timeout and rejoin wait set where
// they were not, or an error when it has no token.
func (ac AgentConfig) withDefaults() (AgentConfig, error) {
	if ac.Log == nil {
		ac.Log = io.Discard
	}
	if ac.Token.IsZero() {
		return ac, fmt.Errorf("agent %d: no token: the coordinator admits only agents that prove one", ac.Index)
	}
	if ac.DialTimeout <= 0 {
		ac.DialTimeout = 30 * time.Second
	}
	if ac.RejoinWait <= 0 {
		ac.RejoinWait = 500 * time.Millisecond
	}
	return ac, nil
}

// rejoins is what ended an agent's connections to its coordinator, in a
// row: lost, the connections lost (a measured point resets it); and the
// connections closed before the coordinator's challenge, not counted in
// lost (UnchallengedError) but retried with a wait that doubles from
// RejoinWait to beyond the hub's handshake timeout, for as long as a
// dial is (DialTimeout from the first of them).
type rejoins struct {
	lost, unchallenged int
	wait               time.Duration
	since              time.Time
}

// next is how long to wait before the agent dials again, its session
// having ended with err (measured: after a point it measured), or the
// error that ends the agent.
func (r *rejoins) next(ac AgentConfig, err error, measured bool, lastPoint error) (time.Duration, error) {
	var early *UnchallengedError
	if errors.As(err, &early) && !measured {
		if r.unchallenged == 0 {
			r.since, r.wait = time.Now(), ac.RejoinWait
		}
		r.unchallenged++
		if time.Since(r.since)+r.wait > ac.DialTimeout {
			return 0, fmt.Errorf("%d connections in a row ended before the coordinator's challenge, over %v (--dial-timeout %v): %w",
				r.unchallenged, time.Since(r.since).Round(time.Millisecond), ac.DialTimeout, err)
		}
		fmt.Fprintf(ac.Log, "agent %d: connection %v; trying again in %v (not counted against --rejoin)\n", ac.Index, err, r.wait)
		wait := r.wait
		r.wait = min(2*r.wait, MaxUnchallengedWait)
		return wait, nil
	}
	r.unchallenged = 0
	if measured {
		r.lost = 0
	}
	r.lost++
	fmt.Fprintf(ac.Log, "agent %d: connection to the coordinator ended: %v\n", ac.Index, err)
	if r.lost > ac.Rejoin {
		err = fmt.Errorf("connection to the coordinator lost %d times in a row (--rejoin %d): %w", r.lost, ac.Rejoin, err)
		var bad *BadArgsError
		if errors.As(lastPoint, &bad) && !errors.As(err, &bad) {
			err = fmt.Errorf("%w (its last point: %w)", err, bad)
		}
		return 0, err
	}
	fmt.Fprintf(ac.Log, "agent %d: rejoining (%d of %d)\n", ac.Index, r.lost, ac.Rejoin)
	return ac.RejoinWait, nil
}

// MaxUnchallengedWait is the longest wait before a redial after a
// connection that ended before its challenge: twice the hub's handshake
// timeout, so that the peers that held its places have been dropped.
const MaxUnchallengedWait = 2 * AuthTimeout

// RefusedError is the coordinator refusing this agent's hello for good
// (an index it has no segment for).
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "coordinator refused the agent: " + e.Reason }

// agentSession is one connection: hello, then points until done (true) or the
// connection ends (err). measured: at least one point's result was sent.
func agentSession(ctx context.Context, ac AgentConfig, nc net.Conn, points *int, lastPoint *error) (done, measured bool, err error) {
	// A read waiting for the next point has no deadline: cancelling ctx
	// (SIGTERM) must still end it.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	c := newConn(nc)
	_ = nc.SetDeadline(time.Now().Add(min(ac.DialTimeout, AuthTimeout)))
	if err := authenticateTo(c, ac.Token, ac.Index); err != nil {
		// TLS 1.3 verifies the client's certificate after the client's
		// side of the handshake is done: a refusal comes as an alert on
		// the first read ("remote error: tls: ...").
		var op *net.OpError
		if ac.TLS != nil && errors.As(err, &op) && op.Op == "remote error" {
			return false, false, &CoordinatorAuthError{Reason: "TLS: the coordinator refused this agent's certificate (" + err.Error() + ")"}
		}
		return false, false, err
	}
	_ = nc.SetDeadline(time.Time{})
	fmt.Fprintf(ac.Log, "agent %d: the coordinator at %s proved the token\n", ac.Index, nc.RemoteAddr())
	// Between points there is no deadline: the next point may be minutes
	// away (a server boots); TCP keepalive finds a dead peer.
	var next *message
	for {
		m := next
		next = nil
		if m == nil {
			m = &message{}
			m.typ, m.body, m.err = c.recv()
		}
		if m.err != nil {
			return false, measured, fmt.Errorf("waiting for a point: %w", m.err)
		}
		switch m.typ {
		case tDone:
			return true, measured, nil
		case tAbort:
			reason := m.body.(*Abort).Reason
			switch {
			case strings.HasPrefix(reason, "auth"):
				return false, measured, &CoordinatorAuthError{Reason: "the coordinator refused this agent's token"}
			case strings.HasPrefix(reason, "hello."):
				return false, measured, &RefusedError{Reason: reason}
			case *points == 0: // refused for now (its index is busy): rejoin
				return false, measured, &AbortError{Reason: reason}
			}
			continue // the abort of the point it just failed: wait for the next
		case tPong, tGo:
			continue // sent before the abort of a point it already left
		case tWelcome:
		default:
			return false, measured, fmt.Errorf("type: got %q, want welcome or done", m.typ)
		}
		*points++
		var ok bool
		next, ok, *lastPoint = runAgentPoint(ctx, ac, c, m.body.(*Welcome))
		if ok {
			measured = true
		}
		if ctx.Err() != nil {
			return false, measured, ctx.Err()
		}
	}
}

// message is one message read (or the read's error).
type message struct {
	typ  string
	body any
	err  error
}

func dialRetry(ctx context.Context, addr string, timeout time.Duration, tlsConf *tls.Config) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	var d net.Dialer
	for {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		nc, err := d.DialContext(dctx, "tcp", addr)
		if err == nil {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			if tlsConf != nil {
				tc := tls.Client(nc, tlsConf)
				// A coordinator whose certificate does not verify is
				// refused at once, as one that cannot prove the token.
				if err := tc.HandshakeContext(dctx); err != nil {
					cancel()
					nc.Close()
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					return nil, &CoordinatorAuthError{Reason: fmt.Sprintf("TLS handshake with %s: %v", addr, err)}
				}
				nc = tc
			}
			cancel()
			return nc, nil
		}
		cancel()
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("--coordinator %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
