//go:build e2e

package agents

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// Idle peers do not lock an agent out (issue 35): MaxPending connections
// that never speak, each reopened as soon as it is closed, hold the hub's
// handshake places while an agent joins; the agent still joins and a
// point is measured.
func testAgentJoinsPastIdlePeers(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	var log syncBuf
	h, err := NewHub("127.0.0.1:0", 1, testToken, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	// The idle peers: each one's goroutine dials, waits for the hub to
	// close it, and dials again, until the test ends.
	var peers sync.WaitGroup
	idleCtx, stopIdle := context.WithCancel(ctx)
	defer func() { stopIdle(); peers.Wait() }()
	for range MaxPending {
		peers.Add(1)
		go func() {
			defer peers.Done()
			for idleCtx.Err() == nil {
				c, err := (&net.Dialer{}).DialContext(idleCtx, "tcp", h.Addr())
				if err != nil {
					return
				}
				stop := context.AfterFunc(idleCtx, func() { c.Close() })
				_, _ = io.Copy(io.Discard, c) // until the hub closes it
				stop()
				c.Close()
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.authenticating() < MaxPending && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var alog syncBuf
	done := make(chan error, 1)
	go func() {
		// --rejoin 0: any connection lost that counts ends the agent.
		done <- RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, DialTimeout: 5 * time.Second, Parse: testParse, Log: &alog})
	}()
	out, err := h.Run(ctx, onePoint(srv.EchoURL()))
	if err != nil || out.Merged.Summary.ConnectionsOpen != 2 {
		t.Fatalf("point beside %d idle peers: %v\nhub:\n%s\nagent:\n%s", MaxPending, err, log.String(), alog.String())
	}
	if !strings.Contains(log.String(), "connections closed so far in their handshake for newer ones") {
		t.Errorf("the agent joined without taking an idle peer's place: the test did not hold the places\nhub:\n%s", log.String())
	}
	stopIdle()
	peers.Wait()
	h.Close()
	if err := <-done; err != nil {
		t.Errorf("agent: %v\n%s", err, alog.String())
	}
}

// A connection that ends before the coordinator's challenge does not
// count against --rejoin: the agent redials, waiting longer each time,
// and joins once the coordinator answers; it gives up after --dial-timeout
// of such connections in a row, saying so.
func testAgentUnchallengedConnectionsDoNotCount(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	h, err := NewHub("127.0.0.1:0", 1, testToken, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// A front that closes its first 3 connections unread, then passes
	// the rest through to the hub.
	front, closer := frontOf(t, h.Addr(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var alog syncBuf
	done := make(chan error, 1)
	go func() {
		done <- RunAgent(ctx, AgentConfig{Coordinator: front, Index: 0, Token: testToken, DialTimeout: 5 * time.Second,
			RejoinWait: 10 * time.Millisecond, Parse: testParse, Log: &alog})
	}()
	out, err := h.Run(ctx, onePoint(srv.EchoURL()))
	if err != nil || out.Merged.Summary.ConnectionsOpen != 2 {
		t.Fatalf("point: %v\nagent:\n%s", err, alog.String())
	}
	h.Close()
	if err := <-done; err != nil {
		t.Errorf("agent: %v\n%s", err, alog.String())
	}
	if n := strings.Count(alog.String(), "not counted against --rejoin"); n != 3 {
		t.Errorf("agent said %d connections did not count, want 3:\n%s", n, alog.String())
	}
	for _, w := range []string{"in 10ms", "in 20ms", "in 40ms"} {
		if !strings.Contains(alog.String(), w) {
			t.Errorf("agent log does not wait %q (doubling):\n%s", w, alog.String())
		}
	}
	closer()

	// A coordinator that never answers: bounded by --dial-timeout.
	never, closeNever := frontOf(t, h.Addr(), 1<<30)
	defer closeNever()
	start := time.Now()
	err = RunAgent(ctx, AgentConfig{Coordinator: never, Index: 0, Token: testToken, DialTimeout: 500 * time.Millisecond,
		RejoinWait: 10 * time.Millisecond, Parse: testParse})
	var early *UnchallengedError
	if !errors.As(err, &early) || !strings.Contains(err.Error(), "ended before the coordinator's challenge") || time.Since(start) > 10*time.Second {
		t.Errorf("against a front that closes every connection: %v after %v, want an UnchallengedError within the dial timeout", err, time.Since(start))
	}
}

// frontOf listens on loopback and closes its first n connections unread;
// the others it passes through to addr. It returns its address and a
// function that stops it.
func frontOf(t *testing.T, addr string, n int) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; ; k++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if k < n {
				c.Close()
				continue
			}
			b, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(b, c); b.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, b); c.Close() }()
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { ln.Close() }) }
	t.Cleanup(func() { stop(); wg.Wait() })
	return ln.Addr().String(), stop
}

// onePoint is a short point of one agent with 2 connections against url.
func onePoint(url string) Plan {
	return Plan{
		Agents: 1, Connections: 2, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		Args:         []string{"--url", url, "--duration", "300ms", "--warmup", "100ms"},
		ReadyTimeout: 15 * time.Second, ResultTimeout: 5 * time.Second, MaxStartSkew: 200 * time.Millisecond,
	}
}
