package agents

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A point that fails while one of its sessions has not been welcomed yet
// says nothing of itself to that agent: neither the abort nor, after it,
// the welcome. Once the hub sent abort and then welcome: the agent took
// the abort for its last point's, started the dead point, pinged
// unanswered, and read the next point's welcome (or done) where it
// wanted its pong, and dropped the session (TestHubServesPoints under
// load). The seam holds agent 0's welcome until the point was given up,
// so the order is forced, not raced.
func TestHubNeverWelcomesAfterAbort(t *testing.T) {
	h, err := NewHub("127.0.0.1:0", 2, testToken, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	reached := make(chan struct{})
	var once sync.Once
	h.beforeWelcome = func(ctx context.Context, index int) {
		if index == 0 {
			once.Do(func() { close(reached) })
			<-ctx.Done() // the point's goroutines end after its abort
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	peers := make([]*rawPeer, 2)
	for i := range peers {
		peers[i] = dialRaw(t, h.Addr())
		na, ch := peers[i].hello(t, i)
		peers[i].send(tAuth, &AuthMsg{Proof: testToken.proof(roleAgent, i, na, ch.Nonce)})
	}
	ran := make(chan error, 1)
	go func() {
		_, err := h.Run(ctx, Plan{Agents: 2, Connections: 2, Args: []string{"--url", "ws://127.0.0.1:1/"}, Samples: 1, ReadyTimeout: time.Minute})
		ran <- err
	}()
	select {
	case <-reached: // agent 0 is claimed, its welcome not sent
	case <-ctx.Done():
		t.Fatal("agent 0 was never claimed")
	}
	// Agent 1 fails its point before ready, as one with bad flags does.
	p1 := peers[1]
	if typ, _, err := p1.next(); err != nil || typ != tWelcome {
		t.Fatalf("agent 1: %s %v, want welcome", typ, err)
	}
	p1.send(tPing, &Ping{Seq: 0, T1: 1})
	if typ, _, err := p1.next(); err != nil || typ != tPong {
		t.Fatalf("agent 1: %s %v, want pong", typ, err)
	}
	p1.send(tResult, &ResultMsg{Failure: "bad flags"})
	if err := <-ran; err == nil || !strings.Contains(err.Error(), "bad flags") {
		t.Fatalf("point: %v, want agent 1's failure", err)
	}
	h.Close()
	// Agent 0 was never welcomed; agent 1's welcome and pong were read.
	want := [][]string{{tDone}, {tAbort, tDone}}
	for i, p := range peers {
		var got []string
		for {
			typ, _, err := p.next()
			if err != nil {
				break
			}
			got = append(got, typ)
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("agent %d was sent %q after the point's start, want %q", i, got, want[i])
		}
	}
}
