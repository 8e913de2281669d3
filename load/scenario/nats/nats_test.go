//go:build e2e

package nats_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/scenario/nats"
)

// config is one short run of mode against url: 3 connections, --batch 8,
// a window of window after 300ms of warm-up.
func config(t *testing.T, mode, url string, window time.Duration, set func(*nats.Params)) load.Config {
	t.Helper()
	d, ok := load.Lookup(mode)
	if !ok {
		t.Fatalf("scenario %s is not registered", mode)
	}
	c := load.DefaultConfig()
	c.Scenario, c.URL = mode, url
	c.Connections, c.Batch, c.RecordSize = 3, 8, 128
	c.DurationNs, c.WarmupNs = int64(window), int64(300*time.Millisecond)
	p := d.NewParams().(*nats.Params)
	p.Keys = 2
	if mode == nats.Fetch || mode == nats.Mixed {
		p.Prepopulate, p.Max = 2000, 50
	}
	if set != nil {
		set(p)
	}
	c.Params = p
	return c
}

func run(t *testing.T, c load.Config) (*load.Result, nats.Summary) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := load.Run(ctx, c, load.Options{})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	var s nats.Summary
	if ok, berr := res.Summary.Block(nats.BlockKey, &s); !ok || berr != nil {
		t.Fatalf("summary.nats: present %v, %v", ok, berr)
	}
	if err != nil {
		t.Fatalf("run: %v (errors %v, nats %+v)", err, res.Summary.ErrorsByReason, s)
	}
	return res, s
}

// Each scenario measures against a real nats-server over WebSocket with
// no error, and its sequence checks pass.
func testEachModeMeasures(t *testing.T) {
	srv := startServer(t)
	for _, mode := range nats.Modes {
		t.Run(mode, func(t *testing.T) {
			res, s := run(t, config(t, mode, srv.url(), time.Second, nil))
			sum := res.Summary
			if sum.Messages == 0 || sum.ThroughputPerS <= 0 || sum.Latency.Count == 0 {
				t.Fatalf("nothing measured: %+v", sum)
			}
			if sum.Errors != 0 {
				t.Fatalf("errors %v", sum.ErrorsByReason)
			}
			if g := res.Generator; g.Engine != "nats.go" || g.Loops != nil {
				t.Fatalf("engine %q loops %+v", g.Engine, g.Loops)
			}
			if s.Mode != mode || s.Gaps != 0 || s.OutOfOrder != 0 {
				t.Fatalf("summary.nats %+v", s)
			}
			switch mode {
			case nats.Produce, nats.Mixed, nats.Stream:
				if s.SequenceCheck != "continuous" || s.Acked == 0 || s.AckLatency == nil || s.AckLatency.Count != s.Acked {
					t.Fatalf("acks: %+v", s)
				}
				if s.StreamLastSeq != uint64(s.AckedTotal+s.Prepopulated) {
					t.Fatalf("stream last seq %d, acks %d + seed %d", s.StreamLastSeq, s.AckedTotal, s.Prepopulated)
				}
			}
			switch mode {
			case nats.Fetch, nats.Mixed:
				if s.Prepopulated != 2000 || s.Fetches == 0 || s.Fetched == 0 || s.FetchLatency == nil {
					t.Fatalf("fetch: %+v", s)
				}
			}
			if mode == nats.Fetch && (s.Fetched != sum.Messages || s.Rewinds == 0) {
				t.Fatalf("fetch: %d fetched, %d messages, %d rewinds (2000 records at 3 connections for 1s must be read through)", s.Fetched, sum.Messages, s.Rewinds)
			}
			if mode == nats.Stream {
				if s.Delivered != sum.Messages || s.Delivered == 0 || sum.Dropped == nil || *sum.Dropped != 0 || sum.Reconnects == nil || *sum.Reconnects != 0 {
					t.Fatalf("stream: %+v, dropped %v reconnects %v", s, sum.Dropped, sum.Reconnects)
				}
			} else if sum.Dropped != nil || sum.Reconnects != nil {
				t.Fatalf("dropped and reconnects are stream's: %v %v", sum.Dropped, sum.Reconnects)
			}
		})
	}
}

// A message deleted from the stream while fetch runs is a gap every
// consumer that passes it reports, by reason.
func testFetchGapPlanted(t *testing.T) {
	srv := startServer(t)
	c := config(t, nats.Fetch, srv.url(), 1500*time.Millisecond, nil)
	deleted := make(chan error, 1)
	go func() { deleted <- deleteWhenSeeded(srv.url(), "CEILING", 2000, 1000) }()
	res, err := load.Run(context.Background(), c, load.Options{})
	if derr := <-deleted; derr != nil {
		t.Fatalf("planting the gap: %v", derr)
	}
	if res == nil {
		t.Fatal(err)
	}
	var s nats.Summary
	res.Summary.Block(nats.BlockKey, &s)
	if res.Summary.ErrorsByReason["fetch_gap"] == 0 || s.Gaps == 0 {
		t.Fatalf("no gap reported: errors %v, nats %+v", res.Summary.ErrorsByReason, s)
	}
	if res.Summary.ErrorsByReason["fetch_out_of_order"] != 0 {
		t.Fatalf("a gap counted as disorder: %v", res.Summary.ErrorsByReason)
	}
}

// deleteWhenSeeded waits until stream holds n messages (the seed is done)
// and deletes sequence seq from it.
func deleteWhenSeeded(url, stream string, n, seq uint64) error {
	nc, err := natsgo.Connect(url, natsgo.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := js.Stream(ctx, stream)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = st.Info(ctx); err == nil && info.State.Msgs >= n {
				time.Sleep(400 * time.Millisecond) // into the window
				err = st.DeleteMsg(ctx, seq)
				cancel()
				return err
			}
		}
		cancel()
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("the stream was never seeded")
}

// A stream consumer whose server goes away mid-window counts the loss in
// dropped and reconnects, not in errors, reconnects to the server back on
// the same port and goes on receiving within the window.
func testStreamReconnect(t *testing.T) {
	srv := startServer(t)
	c := config(t, nats.Stream, srv.url(), 4*time.Second, nil)
	restarted := make(chan uint64, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond) // preflight, connect, warm-up and into the window
		srv.restart()
		seq, _ := lastSeq(srv.url(), "CEILING", "")
		restarted <- seq
	}()
	res, s := run(t, c)
	atRestart := <-restarted
	sum := res.Summary
	if sum.Dropped == nil || *sum.Dropped < int64(c.Connections) || sum.Reconnects == nil || *sum.Reconnects < int64(c.Connections) {
		t.Fatalf("dropped %v reconnects %v, want at least %d each (nats %+v)", sum.Dropped, sum.Reconnects, c.Connections, s)
	}
	if sum.Errors != 0 {
		t.Fatalf("a lost connection counted in errors: %v", sum.ErrorsByReason)
	}
	if atRestart == 0 || s.StreamLastSeq <= atRestart {
		t.Fatalf("publishing did not resume after the restart: stream at %d then, %d at the end", atRestart, s.StreamLastSeq)
	}
	for i := range c.Connections {
		durable := fmt.Sprintf("ceiling-stream-%d", i)
		got, err := lastSeq(srv.url(), "CEILING", durable)
		if err != nil || got <= atRestart {
			t.Fatalf("consumer %s delivered up to stream seq %d (%v), not past %d where the server came back: it did not resubscribe", durable, got, err, atRestart)
		}
	}
}

// lastSeq is the stream's last sequence or, with a durable, the last
// stream sequence that consumer delivered.
func lastSeq(url, stream, durable string) (uint64, error) {
	nc, err := natsgo.Connect(url, natsgo.NoReconnect())
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if durable != "" {
		c, err := js.Consumer(ctx, stream, durable)
		if err != nil {
			return 0, err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, err
		}
		return info.Delivered.Stream, nil
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// Repeated --url against a 3-node cluster: connection i goes to node
// i mod 3, the stream lives on one node, so the other nodes' consumers
// and publishers reach it across the routes; every node holds its share
// of the connections and counts deliveries, with no error.
func TestClusterSpreadsConnections(t *testing.T) {
	nodes := startCluster(t, 3)
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.url())
	}
	for _, mode := range []string{nats.Stream, nats.Produce} {
		t.Run(mode, func(t *testing.T) {
			c := config(t, mode, urls[0], time.Second, func(p *nats.Params) { p.Keys = 1 })
			c.URLs, c.Connections = urls, 6
			res, s := run(t, c)
			if res.Summary.Errors != 0 || res.Summary.Messages == 0 {
				t.Fatalf("errors %v, messages %d", res.Summary.ErrorsByReason, res.Summary.Messages)
			}
			if len(s.Servers) != 3 {
				t.Fatalf("servers %+v", s.Servers)
			}
			var sum int64
			for i, sv := range s.Servers {
				if sv.URL != urls[i] || sv.Connections != 2 || sv.Messages == 0 {
					t.Errorf("server %d: %+v, want %s with 2 connections and messages", i, sv, urls[i])
				}
				sum += sv.Messages
			}
			if sum != res.Summary.Messages {
				t.Errorf("per-server messages add up to %d, the run counted %d", sum, res.Summary.Messages)
			}
		})
	}
}

// TestAgainstOneServer: each scenario against a real nats-server over
// WebSocket: every mode measures with no error and its sequence checks
// pass; a message deleted while fetch runs is a gap its consumers report;
// a stream consumer whose server goes away mid-window reconnects to it back
// on the same port; and wss:// verifies the test's CA, or is insecure when
// asked, or refuses before any load (tls_test.go).
func TestAgainstOneServer(t *testing.T) {
	t.Run("each mode measures", testEachModeMeasures)
	t.Run("fetch gap planted", testFetchGapPlanted)
	t.Run("stream reconnect", testStreamReconnect)
	t.Run("WSS", testWSS)
}
