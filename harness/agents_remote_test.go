//go:build e2e

package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testpki"
	"github.com/ceiling-bench/ceiling/result"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
)

// remoteToken is the token of the tests' AGENTS_LISTEN and their agents.
var remoteToken = agents.NewToken()

// remoteAgent is one `ceiling agent` the test starts (not the harness),
// as a pod would be.
type remoteAgent struct {
	cmd  *exec.Cmd
	log  lockedBuffer
	done chan error
}

// lockedBuffer is a bytes.Buffer safe to read while the process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startRemoteAgent(t *testing.T, coordinator string, i int, flags ...string) *remoteAgent {
	t.Helper()
	a := &remoteAgent{done: make(chan error, 1)}
	a.cmd = exec.Command(filepath.Join(bin, "ceiling"), append([]string{"agent", "--coordinator", coordinator, "--index", strconv.Itoa(i), "--dial-timeout", "20s", "--rejoin", "3"}, flags...)...)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	a.cmd.Env = append(os.Environ(), "GOMAXPROCS=1", agents.TokenEnv+"="+remoteToken.Text())
	// The parent-death signal follows the thread that forked: keep that
	// thread for as long as the agent runs (else the runtime may retire
	// it and kill the agent).
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := a.cmd.Start()
		started <- err
		if err == nil {
			a.done <- a.cmd.Wait()
		}
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-a.done:
		case <-time.After(100 * time.Millisecond):
			_ = a.cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

// exit waits (bounded) for the agent to end by itself: the coordinator
// said done.
func (a *remoteAgent) exit(t *testing.T, i int) {
	t.Helper()
	select {
	case err := <-a.done:
		a.done <- err
		if err != nil {
			t.Errorf("agent %d: %v\n%s", i, err, a.log.String())
		}
	case <-time.After(15 * time.Second):
		_ = a.cmd.Process.Kill()
		t.Errorf("agent %d still running 15 s after the sweep: killed\n%s", i, a.log.String())
	}
}

// listenOptions: a sweep of the given ladder whose 3 agents dial in to
// AGENTS_LISTEN on the loopback.
func listenOptions(t *testing.T, conns []int) (*testSweep, string) {
	t.Helper()
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: conns})
	o.Agents = 3
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	o.AgentsListen = addr
	o.AgentsToken = knob.Secret(remoteToken.Text())
	o.AgentsJoinTimeout = 15 * time.Second
	if _, err := harness.ResolveKnobs(o.Options, nil); err != nil {
		t.Fatal(err)
	}
	return o, addr
}

// TestAgentsListenSweep: with AGENTS_LISTEN the sweep starts no agent; 3
// `ceiling agent` processes the test started join once and serve every
// point, then exit when the sweep says done. Agent 1 joins through a
// proxy that cuts its session once, right after the first point's
// result: it redials and serves the next points. That an agent that
// never joins fails its point by its index within AGENTS_JOIN_TIMEOUT is
// the coordinator's rule (harness/agents' TestPoints).
func TestAgentsListenSweep(t *testing.T) {
	needProcs(t)
	o, addr := listenOptions(t, []int{6, 9})
	// The agents serve one sweep. The harness knows the agents that
	// dialed in from this machine by their sessions' addresses
	// (attribRoots), but agent 1 dials through the test's proxy, whose
	// address is the test's own: the harness rightly counts that agent as
	// other work on the pinned CPUs, so every point here may be contended,
	// and running the sweep again would change nothing. The subject is
	// the agents' session, which contention does not change.
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pl.Close() })
	px := &cutProxy{ln: pl, to: addr}
	go px.serve()
	ags := []*remoteAgent{startRemoteAgent(t, addr, 0), startRemoteAgent(t, pl.Addr().String(), 1), startRemoteAgent(t, addr, 2)}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := runSweepOnce(t, ctx, o, refTarget(t))
	if _, rest := contentionIsNotTheSubject(t, r, err); rest != nil {
		t.Logf("sweep: %v", rest)
	}
	if len(r.Curve) < 2 {
		t.Fatalf("%d points, want 2", len(r.Curve))
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Fatalf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
		}
		// The agents' merged count is checked against refserver's own
		// (metrics.counts): remote agents are not trusted to report it.
		if c := p.CountCheck; c == nil || c.Verdict != "agree" {
			t.Errorf("point %d: count check %+v, want the server's count to agree", p.Index, c)
		}
		conns := 0
		for _, a := range p.Agents {
			conns += a.Connections
			if a.Network != "remote" || a.Peer == "" {
				t.Errorf("point %d agent %d: network %q peer %q, want remote with its peer", p.Index, a.Index, a.Network, a.Peer)
			}
		}
		if len(p.Agents) != 3 || conns != p.Connections {
			t.Errorf("point %d: %d agents with %d connections, want 3 with %d", p.Index, len(p.Agents), conns, p.Connections)
		}
		t.Logf("point %d: %d conns, %.0f msg/s, p99 %v", p.Index, p.Connections, p.ThroughputPerS, time.Duration(p.LatencyNs.P99))
	}
	for i, a := range ags {
		a.exit(t, i)
		// 2 points, and the A-A repeat when the headline was clean.
		want := fmt.Sprintf("done after %d points", len(r.Curve))
		if s := a.log.String(); i != 1 && (!strings.Contains(s, want) || strings.Contains(s, "rejoining")) {
			t.Errorf("agent %d: want one session serving %d points:\n%s", i, len(r.Curve), s)
		}
	}
	px.mu.Lock()
	joined, cut := px.joined, px.cut
	px.mu.Unlock()
	log := ags[1].log.String()
	if !cut || joined != 2 || strings.Count(log, "rejoining") != 1 || !strings.Contains(log, "done after") {
		t.Errorf("agent 1: cut %v, %d connections, want one cut after the first point, one rejoin and the sweep's done:\n%s", cut, joined, log)
	}
	if t.Failed() {
		b, _ := os.ReadFile(filepath.Join(o.WorkDir, "coordinator.log"))
		t.Logf("coordinator.log:\n%s", b)
	}
}

// TestAgentsListenSweepOverTLS: with AGENTS_TLS_*, `ceiling agent
// --tls-*` joins through mutual TLS and serves the point; an agent with
// the token but a certificate of another CA is refused and exits 1,
// saying so, without taking its index.
func TestAgentsListenSweepOverTLS(t *testing.T) {
	needProcs(t)
	o, addr := listenOptions(t, []int{6})
	o.Agents = 2
	dir := t.TempDir()
	ca := testpki.NewCA(t, dir, "ca")
	o.AgentsTLSCert, o.AgentsTLSKey = ca.Leaf(t, dir, "coordinator", "127.0.0.1")
	o.AgentsTLSCA = ca.CertPEM
	agentCert, agentKey := ca.Leaf(t, dir, "agent", "agent")
	rogueCert, rogueKey := testpki.NewCA(t, dir, "rogue").Leaf(t, dir, "rogue-agent", "agent")
	tlsFlags := func(cert, key string) []string {
		return []string{"--tls-cert", cert, "--tls-key", key, "--tls-ca", ca.CertPEM}
	}
	rogue := startRemoteAgent(t, addr, 0, tlsFlags(rogueCert, rogueKey)...)
	var ags []*remoteAgent
	for i := range 2 {
		ags = append(ags, startRemoteAgent(t, addr, i, tlsFlags(agentCert, agentKey)...))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := runSweepOnce(t, ctx, o, refTarget(t))
	if err != nil {
		t.Logf("sweep: %v", err)
	}
	if len(r.Curve) == 0 {
		t.Fatal("no point")
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK || len(p.Agents) != 2 {
			t.Fatalf("point %d: %s %s with %d agents, want ok with 2\n%s", p.Index, p.Status, p.FailReason, len(p.Agents), p.LogTail)
		}
	}
	for i, a := range ags {
		a.exit(t, i)
	}
	select {
	case err := <-rogue.done:
		rogue.done <- err // for the cleanup
		if err == nil || !strings.Contains(rogue.log.String(), "refused this agent's certificate") {
			t.Errorf("the rogue agent: %v\n%s\nwant exit 1, refused", err, rogue.log.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("the rogue agent still runs:\n%s", rogue.log.String())
	}
}

// cutProxy forwards agent connections to the coordinator and, once, cuts
// the session right after the first result it carried: between points.
type cutProxy struct {
	ln     net.Listener
	to     string
	mu     sync.Mutex
	cut    bool
	joined int // connections accepted
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.joined++
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *cutProxy) pipe(c net.Conn) {
	defer c.Close()
	// The hub listens from the sweep's first point on: until then, wait.
	var u net.Conn
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if u, err = net.Dial("tcp", p.to); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return
		}
	}
	defer u.Close()
	go func() { _, _ = io.Copy(c, u); c.Close() }()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := u.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
		if bytes.Contains(line, []byte(`"type":"result"`)) {
			p.mu.Lock()
			first := !p.cut
			p.cut = true
			p.mu.Unlock()
			if first {
				return // both ends close, after the result went on
			}
		}
	}
}
