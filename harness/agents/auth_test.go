//go:build e2e

package agents

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// A peer without the token learns nothing but the hub's challenge: its
// proof is refused with the same words whatever was wrong, a proof
// replayed from an earlier session is refused, and the point's flags
// (here a secret) go only to the agent that proved the token.
func testHubAdmitsOnlyAgentsThatProveTheToken(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	var log syncBuf
	h, err := NewHub("127.0.0.1:0", 1, testToken, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	// 1. A wrong proof.
	p := dialRaw(t, h.Addr())
	na, ch := p.hello(t, 0)
	if !testToken.verify(ch.Proof, roleCoordinator, 0, na, ch.Nonce) {
		t.Error("the hub's challenge does not prove the token")
	}
	p.send(tAuth, &AuthMsg{Proof: NewToken().proof(roleAgent, 0, na, ch.Nonce)})
	if rest := p.rest(); !strings.Contains(rest, `"auth: authentication failed"`) || strings.Contains(rest, "welcome") {
		t.Errorf("after a wrong proof the hub sent %q, want only the abort", rest)
	}

	// 2. A right proof from one session, replayed into the next.
	p1 := dialRaw(t, h.Addr())
	p1.send(tHello, &Hello{Index: 0, Nonce: na})
	_, body, err := p1.next()
	if err != nil {
		t.Fatal(err)
	}
	old := testToken.proof(roleAgent, 0, na, ch.Nonce) // session 1's nonces
	if body.(*Challenge).Nonce == ch.Nonce {
		t.Fatal("the hub reused its nonce")
	}
	p1.send(tAuth, &AuthMsg{Proof: old})
	if rest := p1.rest(); !strings.Contains(rest, "authentication failed") {
		t.Errorf("a replayed proof: the hub sent %q, want the abort", rest)
	}

	// 3. An agent with another token gives up without redialing.
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = RunAgent(wctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: NewToken(), DialTimeout: 5 * time.Second, Rejoin: 3, Parse: testParse})
	wcancel()
	var ae *CoordinatorAuthError
	if !errors.As(err, &ae) {
		t.Errorf("agent with another token: %v, want a CoordinatorAuthError", err)
	}

	// 4. The real agent serves a point whose flags carry a secret.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, DialTimeout: 5 * time.Second, Parse: testParse})
	}()
	// A peer that connects during the point and says nothing sees nothing.
	quiet := dialRaw(t, h.Addr())
	_, err = h.Run(ctx, Plan{
		Agents: 1, Connections: 2, Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
		Args:         []string{"--url", srv.EchoURL(), "--duration", "200ms", "--warmup", "100ms"},
		ReadyTimeout: 10 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: time.Second,
	})
	if err != nil {
		t.Fatalf("point: %v\n%s", err, log.String())
	}
	h.Close()
	if err := <-done; err != nil {
		t.Errorf("agent: %v", err)
	}
	_ = quiet.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if b, _ := io.ReadAll(quiet.r); len(b) != 0 && !strings.HasPrefix(string(b), `{"v":2,"type":"abort","body":{"reason":"auth: authentication failed"}}`) {
		t.Errorf("a silent peer was sent %q, want nothing but the abort", b)
	}
	if n := strings.Count(log.String(), "not admitted"); n < 2 {
		t.Errorf("hub log names %d refused peers, want the 2 wrong proofs:\n%s", n, log.String())
	}
	if strings.Contains(log.String(), testToken.Text()) {
		t.Error("the hub's log holds the token")
	}
}

// An agent proves nothing to a coordinator that cannot prove the token
// first: a listener answering with a made-up challenge gets no auth.
func testAgentRefusesACoordinatorWithoutTheToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		line, _ := r.ReadBytes('\n')
		_, body, err := Decode(line)
		if err != nil {
			got <- err.Error()
			return
		}
		nc := newNonce()
		reply, _ := Encode(tChallenge, &Challenge{Nonce: nc, Proof: NewToken().proof(roleCoordinator, 0, body.(*Hello).Nonce, nc)})
		_, _ = c.Write(reply)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, _ := io.ReadAll(r)
		got <- string(rest)
	}()
	err = RunAgent(context.Background(), AgentConfig{Coordinator: ln.Addr().String(), Index: 0, Token: testToken, DialTimeout: 5 * time.Second, Rejoin: 3, Parse: testParse})
	var ae *CoordinatorAuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "did not prove the token") {
		t.Errorf("agent: %v, want it to refuse the coordinator", err)
	}
	if rest := <-got; rest != "" {
		t.Errorf("after a bad challenge the agent sent %q, want nothing", rest)
	}
	if err := RunAgent(context.Background(), AgentConfig{Coordinator: ln.Addr().String(), Index: 0, Parse: testParse}); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("agent without a token: %v", err)
	}
}

// At most MaxPending connections are in their handshake at once. A
// newcomer takes the place of the oldest once that one has had MinHold
// (admit.go: the hello earns nothing; that a newcomer is closed unread
// while none has had it is TestAdmission's). A long line without a newline is cut at
// maxAuthLine, well before the handshake's timeout, not buffered (a
// flood of them once took the harness from 17 MB to 1 GB).
func testHubBoundsUnauthenticatedPeers(t *testing.T) {
	var log syncBuf
	// The admission's clock, moved past MinHold where the test would
	// otherwise sleep it out.
	var ahead atomic.Int64
	h, err := newHub("127.0.0.1:0", 1, testToken, &log, nil, func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) })
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitPending := func(n int) {
		t.Helper()
		// The hub counts a connection as it accepts it: wait for all of them.
		deadline := time.Now().Add(10 * time.Second)
		for h.authenticating() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := h.authenticating(); got != n {
			t.Fatalf("%d connections authenticating, want %d", got, n)
		}
	}
	silent := make([]*rawPeer, MaxPending)
	for i := range silent {
		silent[i] = dialRaw(t, h.Addr())
		waitPending(i + 1) // in order: silent[0] is the oldest
	}
	// One more, once the oldest has had MinHold: the oldest silent peer
	// gives its place; the newcomer is served (its hello is answered
	// with a challenge).
	ahead.Add(int64(MinHold))
	over := dialRaw(t, h.Addr())
	start := time.Now()
	if b, err := io.ReadAll(silent[0].r); len(b) != 0 || err != nil || time.Since(start) > 5*time.Second {
		t.Errorf("the oldest silent peer: read %q, %v after %v; want closed unread at once", b, err, time.Since(start))
	}
	over.hello(t, 0)
	waitPending(MaxPending)
	if !strings.Contains(log.String(), "connections closed so far in their handshake for newer ones") {
		t.Errorf("hub log does not say it closed a silent peer:\n%s", log.String())
	}
	// Each other silent peer now sends a long line without a newline.
	long := strings.Repeat("x", 64<<10)
	var wg sync.WaitGroup
	for i, p := range silent[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.c.Write([]byte(long)) // the hub may close before all of it
			start := time.Now()
			rest := p.rest()
			if !strings.Contains(rest, "authentication failed") || time.Since(start) > AuthTimeout/2 {
				t.Errorf("peer %d: %q after %v, want the abort well before the handshake's timeout", i+1, rest, time.Since(start))
			}
		}()
	}
	wg.Wait()
	if !strings.Contains(log.String(), fmt.Sprintf("message longer than %d bytes", maxAuthLine)) {
		t.Errorf("hub log does not name the cut:\n%s", log.String())
	}
	// Every place taken again by peers that sent their hello (and then
	// nothing): the hello earns nothing, and a newcomer takes the place
	// of the oldest, the one served above, once it has had MinHold.
	for i := 1; i < MaxPending; i++ {
		dialRaw(t, h.Addr()).hello(t, 0)
	}
	waitPending(MaxPending)
	ahead.Add(int64(MinHold))
	dialRaw(t, h.Addr()).hello(t, 0)
	start = time.Now()
	if rest := over.rest(); time.Since(start) > 5*time.Second {
		t.Errorf("the oldest, which said hello: %q after %v; want its place given up at once", rest, time.Since(start))
	}
}

// TestHubAuthentication: who the hub lets in, and whom an agent trusts,
// over real connections on loopback: only an agent that proves the token
// (and not a replay), never a coordinator that cannot prove it first; at
// most MaxPending peers in their handshake, idle ones giving way to agents;
// connections that end before the challenge not counted against --rejoin;
// and with AGENTS_TLS_*, mutual TLS before the token (tls_test.go,
// idle_test.go).
func TestHubAuthentication(t *testing.T) {
	t.Run("hub admits only agents that prove the token", testHubAdmitsOnlyAgentsThatProveTheToken)
	t.Run("agent refuses a coordinator without the token", testAgentRefusesACoordinatorWithoutTheToken)
	t.Run("hub bounds unauthenticated peers", testHubBoundsUnauthenticatedPeers)
	t.Run("agent joins past idle peers", testAgentJoinsPastIdlePeers)
	t.Run("agent joins past stalling peers", testAgentJoinsPastStallingPeers)
	t.Run("agent unchallenged connections do not count", testAgentUnchallengedConnectionsDoNotCount)
	t.Run("hub mutual TLS", testHubMutualTLS)
}
