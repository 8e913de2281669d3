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
	peers := joinRaw(t, h, 2)
	ran := startPoint(ctx, h)
	select {
	case <-reached: // agent 0 is claimed, its welcome not sent
	case <-ctx.Done():
		t.Fatal("agent 0 was never claimed")
	}
	failBeforeReady(t, peers[1], ran)
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

// lineLog is a hub's log, each line handed to the test as it is written.
type lineLog chan string

func (l lineLog) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// A point that fails parks its sessions at once, while an agent may still
// be answering its welcome: its clock samples, ready and started arrive
// at the idle session, which skips them (and is dropped for anything
// else, here a pong). Once the late ping ended the session, and the next
// point waited for agent 0 in vain (TestHubServesPoints in CI). Agent 0
// sends them only after Run returned, so its session is idle by then:
// the order is forced, not raced.
func TestHubSkipsAnAbortedPointsLatePing(t *testing.T) {
	log := make(lineLog, 64)
	h, err := NewHub("127.0.0.1:0", 2, testToken, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	peers := joinRaw(t, h, 2)
	ran := startPoint(ctx, h)
	p0 := peers[0]
	if typ, _, err := p0.next(); err != nil || typ != tWelcome {
		t.Fatalf("agent 0: %s %v, want welcome", typ, err)
	}
	failBeforeReady(t, peers[1], ran)
	// Agent 0 answers the welcome it read before the abort, in one
	// write: a session dropped early gets the rest unread.
	var late []byte
	for _, m := range []struct {
		typ  string
		body any
	}{
		{tPing, &Ping{Seq: 0, T1: 1}}, {tPing, &Ping{Seq: 1, T1: 2}}, {tReady, &Ready{Open: 1}}, {tStarted, &Started{}},
		{tPong, &Pong{Seq: 1}}, // not an agent's: ends the session
	} {
		line, err := Encode(m.typ, m.body)
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, line...)
	}
	if _, err := p0.c.Write(late); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case line := <-log:
			if !strings.Contains(line, "left between points") {
				continue
			}
			if want := `agent 0 left between points: type: got "pong" between points`; !strings.Contains(line, want) {
				t.Errorf("hub log %q, want %q: the session kept through ping, ready and started", line, want)
			}
			return
		case <-ctx.Done():
			t.Fatal("agent 0's session was never dropped")
		}
	}
}

// joinRaw is n raw peers that joined h as its agents 0 to n-1.
func joinRaw(t *testing.T, h *Hub, n int) []*rawPeer {
	t.Helper()
	peers := make([]*rawPeer, n)
	for i := range peers {
		peers[i] = dialRaw(t, h.Addr())
		na, ch := peers[i].hello(t, i)
		peers[i].send(tAuth, &AuthMsg{Proof: testToken.proof(roleAgent, i, na, ch.Nonce)})
	}
	return peers
}

// startPoint runs a point of agents 0 and 1 on h; its error comes on the
// channel.
func startPoint(ctx context.Context, h *Hub) <-chan error {
	ran := make(chan error, 1)
	go func() {
		_, err := h.Run(ctx, Plan{Agents: 2, Connections: 2, Args: []string{"--url", "ws://127.0.0.1:1/"}, Samples: 1, ReadyTimeout: time.Minute})
		ran <- err
	}()
	return ran
}

// failBeforeReady has p read its welcome and fail the point before ready,
// as an agent with bad flags does; the point must end with that failure.
func failBeforeReady(t *testing.T, p *rawPeer, ran <-chan error) {
	t.Helper()
	if typ, _, err := p.next(); err != nil || typ != tWelcome {
		t.Fatalf("agent: %s %v, want welcome", typ, err)
	}
	p.send(tPing, &Ping{Seq: 0, T1: 1})
	if typ, _, err := p.next(); err != nil || typ != tPong {
		t.Fatalf("agent: %s %v, want pong", typ, err)
	}
	p.send(tResult, &ResultMsg{Failure: "bad flags"})
	if err := <-ran; err == nil || !strings.Contains(err.Error(), "bad flags") {
		t.Fatalf("point: %v, want the agent's failure", err)
	}
}
