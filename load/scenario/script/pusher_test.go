package script

import (
	"errors"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

const pusherFile = "../../../benchmark/scenarios/pusher.json"

// runPusher runs benchmark/scenarios/pusher.json through load.Run against
// refserver's Pusher subset, with secret as PUSHER_SECRET.
func runPusher(t *testing.T, secret string) (*load.Result, map[string]*KindSummary) {
	t.Helper()
	t.Setenv("PUSHER_APP_ID", refserver.DefaultAppID)
	t.Setenv("PUSHER_KEY", refserver.DefaultKey)
	t.Setenv("PUSHER_SECRET", secret)
	srv := refservertest.Start(t, refserver.Config{})
	res, kinds, err := loadFile(t, "ws://"+srv.Addr, pusherFile, 20)
	// With the wrong secret nothing arrives, and the run says so.
	if err != nil && (!errors.Is(err, load.ErrNothingArrived) || secret == refserver.DefaultSecret) {
		t.Fatal(err)
	}
	return res, kinds
}

// TestPusherRESTRefserver: the Pusher file, written from docs/scenarios.md,
// drives refserver's Pusher subset: 2 REST publishers (one per room of
// 10) sign each publish as Pusher's HTTP API says (refserver verifies
// it), 18 subscribers hear every event, and latency is read from the
// timestamp inside the event's data string. Nothing is received that was
// not offered. A wrong secret fails every publish, named by its status.
func TestPusherRESTRefserver(t *testing.T) {
	res, k := runPusher(t, refserver.DefaultSecret)
	pub, ev := k["publish"], k["event"]
	// 2 publishers x 20/s x 1 s.
	if pub.Sent < 36 || pub.Sent > 44 {
		t.Errorf("publish.sent = %d, want about 40", pub.Sent)
	}
	if ev.Expected == nil || *ev.Expected != 9*pub.Sent || ev.Received != *ev.Expected {
		t.Errorf("event: received %d of %v for %d publishes, want all of 9 each", ev.Received, ev.Expected, pub.Sent)
	}
	checkLatency(t, "event", ev.Latency)
	if len(res.Summary.ErrorsByReason) != 0 || len(pub.ErrorsByReason) != 0 {
		t.Errorf("errors %v, publish errors %v", res.Summary.ErrorsByReason, pub.ErrorsByReason)
	}
	var unmatched int64
	if res.Summary.Block(BlockUnmatched, &unmatched); unmatched != 0 {
		t.Errorf("unmatched = %d", unmatched)
	}

	_, k = runPusher(t, "not-the-secret")
	pub, ev = k["publish"], k["event"]
	if pub.Sent == 0 || pub.ErrorsByReason["status_401"] != pub.Sent || ev.Received != 0 {
		t.Errorf("wrong secret: publish %+v, event received %d; want every publish a 401", pub, ev.Received)
	}
}
