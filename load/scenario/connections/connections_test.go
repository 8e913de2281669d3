package connections

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// echoServer is a real refserver in-process on a loopback port: its
// /echo URL, and its count of connections accepted.
func echoServer(t *testing.T) (url string, accepted func() uint64) {
	t.Helper()
	s := refservertest.Start(t, refserver.Config{})
	return s.EchoURL(), func() uint64 { return s.Stats().ConnectionsTotal }
}

func config(urls ...string) load.Config {
	c := load.DefaultConfig()
	c.Scenario, c.URL, c.Connections, c.RecordSize = Name, urls[0], 40, 32
	if len(urls) > 1 {
		c.URLs = urls
	}
	c.DurationNs, c.WarmupNs = int64(300*time.Millisecond), 0
	c.Params = &Params{Ramp: 0, SendInterval: 100 * time.Millisecond}
	return c
}

// Held over two servers, connection i to server i mod 2, each sending on
// its interval: the rate is theirs together, every round trip timed, and
// the block says how they opened.
func TestHeldOverTwoServers(t *testing.T) {
	u1, n1 := echoServer(t)
	u2, n2 := echoServer(t)
	c := config(u1, u2)
	res, err := load.Run(context.Background(), c, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Rate != 400 {
		t.Errorf("rate %v: want 40 connections / 100ms = 400 a second", res.Config.Rate)
	}
	if a, b := n1(), n2(); a != 20 || b != 20 {
		t.Errorf("connections %d and %d: want 20 on each server", a, b)
	}
	s := res.Summary
	if s.ConnectionsOpen != 40 || s.Errors != 0 || s.Latency.Count == 0 || s.Mode != "open" {
		t.Errorf("summary %+v", s)
	}
	var b Block
	if ok, err := s.Block(Name, &b); !ok || err != nil {
		t.Fatalf("no connections block: %v", err)
	}
	if b.Open != 40 || b.OpenNs <= 0 || b.SendIntervalNs != int64(100*time.Millisecond) || len(b.ConnectErrors) != 0 {
		t.Errorf("block %+v", b)
	}
}

// The ramp spaces the connects: the 20th of 20 at 200 a second cannot
// open before 95 ms.
func TestRampSpacesTheConnects(t *testing.T) {
	u, _ := echoServer(t)
	c := config(u)
	c.Connections = 20
	c.Params = &Params{Ramp: 200, SendInterval: 100 * time.Millisecond}
	res, err := load.Run(context.Background(), c, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b Block
	if _, err := res.Summary.Block(Name, &b); err != nil {
		t.Fatal(err)
	}
	if b.OpenNs < int64(95*time.Millisecond) || b.RampPerS != 200 || b.AchievedPerS > 20/0.095 {
		t.Errorf("block %+v: 20 connections at 200/s take 95 ms at least", b)
	}
}

// A connect that fails is counted by its class in the block.
func TestConnectErrorsByClass(t *testing.T) {
	u, _ := echoServer(t)
	c := config(u, "ws://127.0.0.1:1/echo") // half to a port nobody listens on
	c.Connections = 10
	res, _ := load.Run(context.Background(), c, load.Options{})
	var b Block
	if _, err := res.Summary.Block(Name, &b); err != nil {
		t.Fatal(err)
	}
	if b.Open != 5 || b.ConnectErrors["ECONNREFUSED"] != 5 {
		t.Errorf("block %+v: want 5 open, 5 ECONNREFUSED", b)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*load.Config, *Params)
		set  string
		want string
	}{
		{func(*load.Config, *Params) {}, "rate", "--rate: --scenario connections"},
		{func(_ *load.Config, p *Params) { p.Ramp = -1 }, "", "--ramp -1"},
		{func(_ *load.Config, p *Params) { p.SendInterval = 0 }, "", "--send-interval 0s"},
		{func(c *load.Config, _ *Params) { c.Drop = true }, "", "--drop"},
		{func(c *load.Config, _ *Params) { c.URLs = []string{c.URL, "wss://127.0.0.1:2/echo"} }, "", "wss is not supported"},
	} {
		c := config("ws://127.0.0.1:1/echo")
		p := c.Params.(*Params)
		tc.edit(&c, p)
		err := c.Validate(func(f string) bool { return f == tc.set })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want %q", err, tc.want)
		}
	}
}

func TestTargetBlock(t *testing.T) {
	d, _ := load.Lookup(Name)
	blk, err := d.Target.Parse(json.RawMessage(`{"urls": ["ws://{addr}/echo", "ws://{host}:{port2}/echo"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if blk.URL() != "ws://{addr}/echo" || strings.Join(blk.Args(), " ") != "--url ws://{host}:{port2}/echo" {
		t.Errorf("block %q %q", blk.URL(), blk.Args())
	}
	if l := blk.(load.LadderBlock).ConnsLadder(false); l[len(l)-1] != 100_000 {
		t.Errorf("default ladder %v", l)
	}
	if o := blk.(load.ObjectiveBlock).Objective(); o != DefaultObjective {
		t.Errorf("objective %q", o)
	}
	for raw, want := range map[string]string{`{}`: "url: empty", `{"url": "x", "urls": ["y"]}`: "not both", `{"ulr": "x"}`: "unknown field"} {
		if _, err := d.Target.Parse(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", raw, err, want)
		}
	}
	if raw := d.Target.FromURL("ws://{addr}/echo"); string(raw) != `{"url":"ws://{addr}/echo"}` {
		t.Errorf("FromURL: %s", raw)
	}
}
