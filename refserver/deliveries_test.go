package refserver

import "testing"

// TestDeliveriesCountedBeforeSent: Stats.Deliveries counts an event frame
// before its writer can send it, so a client that has read an event finds
// it counted. The count used to be added once the whole fan-out had
// returned, and TestClusterDeliversAcrossNodes then read 0 deliveries on a
// node whose subscriber had the event.
//
// The test holds the second subscriber's queue lock, so the fan-out stops
// there after queuing the first subscriber's frame: that frame must be
// counted by the time its client reads it, and the second once the lock is
// let go. Deterministic either way: the old code fails it every time.
func TestDeliveriesCountedBeforeSent(t *testing.T) {
	ts := start(t, Config{})
	first, _ := ts.connect(t)
	subscribe(t, first, "room-1")
	second, _ := ts.connect(t)
	subscribe(t, second, "room-1")

	ts.hub.mu.RLock()
	list := ts.hub.channels["room-1"].list
	ts.hub.mu.RUnlock()
	if len(list) != 2 {
		t.Fatalf("room-1 has %d subscribers, want 2", len(list))
	}
	blocker := list[1]
	blocker.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.deliver([]rawEvent{{nameLit: []byte(`"e"`), name: "e", channel: "room-1", dataLit: []byte(`"x"`)}})
	}()
	if m := readMsg(t, first); m.Event != "e" {
		blocker.mu.Unlock()
		t.Fatalf("first subscriber got %+v", m)
	}
	got := ts.Stats().Deliveries
	blocker.mu.Unlock()
	if got != 1 {
		t.Errorf("the first subscriber has read the event, the second is not yet queued: Stats.Deliveries is %d, want 1", got)
	}
	if m := readMsg(t, second); m.Event != "e" {
		t.Fatalf("second subscriber got %+v", m)
	}
	<-done
	if got := ts.Stats().Deliveries; got != 2 {
		t.Errorf("after the fan-out: Stats.Deliveries is %d, want 2", got)
	}
}
