//go:build e2e

package agents

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// testAgentJoinsPastStallingPeers is issue 52's third failure: 16 peers
// that send a token-less hello, read the challenge and stall, reconnecting
// when dropped, locked the real agent out (it gave up after 15.5 s), and
// 32 silent peers that reconnect when closed made the hub accept and drop
// about 26,600 connections a second (a core). Here 32 peers that stall
// after their hello and reconnect when dropped, from the agent's own
// address, hold their places while the agent joins: it joins and a
// point is measured, and the hub accepted at most AcceptRate
// connections a second (a count, whatever the machine's speed: a slower
// machine accepts fewer). On ba59874 the 16 places are the stallers',
// the other 16 churn through thousands of connections a second, and the
// agent is turned away until it gives up.
func testAgentJoinsPastStallingPeers(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	var log syncBuf
	h, err := NewHub("127.0.0.1:0", 1, testToken, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	peerCtx, stopPeers := context.WithCancel(ctx)
	var peers sync.WaitGroup
	defer func() { stopPeers(); peers.Wait() }()
	hello, err := Encode(tHello, &Hello{Index: 0, Nonce: newNonce()})
	if err != nil {
		t.Fatal(err)
	}
	var dials sync.Map
	start := time.Now()
	for i := range 32 {
		peers.Add(1)
		go func() {
			defer peers.Done()
			n := 0
			for peerCtx.Err() == nil {
				c, err := (&net.Dialer{}).DialContext(peerCtx, "tcp", h.Addr())
				if err != nil {
					return
				}
				n++
				stop := context.AfterFunc(peerCtx, func() { c.Close() })
				_, _ = c.Write(hello)         // then read the challenge, and say nothing more
				_, _ = io.Copy(io.Discard, c) // until the hub closes it
				stop()
				c.Close()
			}
			dials.Store(i, n)
		}()
	}
	// The agent comes once the peers hold their places (all of them, or
	// every place there is), as the did.
	deadline := time.Now().Add(10 * time.Second)
	for h.authenticating() < min(32, MaxPending) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var alog syncBuf
	done := make(chan error, 1)
	go func() {
		// The agent: it gave up after 15.5 s of such peers.
		done <- RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, DialTimeout: 15 * time.Second, Parse: testParse, Log: &alog})
	}()
	out, err := h.Run(ctx, onePoint(srv.EchoURL()))
	if err != nil || out.Merged.Summary.ConnectionsOpen != 2 {
		t.Fatalf("point beside 32 stalling and churning peers: %v\nhub:\n%.3000s\nagent:\n%s", err, log.String(), alog.String())
	}
	elapsed := time.Since(start)
	accepted := h.accepted.Load()
	stopPeers()
	peers.Wait()
	h.Close()
	if err := <-done; err != nil {
		t.Errorf("agent: %v\n%s", err, alog.String())
	}
	// The hub's cost: its accepts, bounded by the pacing whatever the
	// peers do (each accept is a syscall, a goroutine and a nonce).
	if max := int64(elapsed.Seconds()*AcceptRate) + AcceptBurst + 1; accepted > max {
		t.Errorf("the hub accepted %d connections in %v, want at most %d (AcceptRate %d a second)", accepted, elapsed, max, AcceptRate)
	}
	total := 0
	dials.Range(func(_, v any) bool { total += v.(int); return true })
	t.Logf("%d connections accepted in %v (%d dials by the peers); hub: %d turned away, %d evicted, %d past their source's rate",
		accepted, elapsed.Round(time.Millisecond), total, h.turned.Load(), h.evicted.Load(), h.limited.Load())
	if strings.Contains(alog.String(), "gave up") {
		t.Errorf("the agent gave up:\n%s", alog.String())
	}
}
