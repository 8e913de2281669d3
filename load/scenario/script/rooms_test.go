package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/objective"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// runRooms runs benchmark/scenarios/rooms.json through load.Run (the
// registry, the engine's window, the summary blocks) against refserver.
func runRooms(t *testing.T, cfg refserver.Config, conns int) (*load.Result, map[string]*KindSummary) {
	t.Helper()
	srv := refservertest.Start(t, cfg)
	res, kinds, err := loadFile(t, "ws://"+srv.Addr, roomsFile, conns)
	if err != nil {
		t.Fatal(err)
	}
	return res, kinds
}

// loadFile runs a scenario file through load.Run against url, 1 s after
// 300 ms of warm-up: the result, its summary.kinds, and load.Run's error
// (the result may come with one).
func loadFile(t *testing.T, url, file string, conns int) (*load.Result, map[string]*KindSummary, error) {
	t.Helper()
	c := load.DefaultConfig()
	c.Scenario = Name
	c.URL = url
	c.Connections = conns
	c.WarmupNs = int64(300 * time.Millisecond)
	c.DurationNs = int64(time.Second)
	c.Params = &Params{File: file}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := load.Run(ctx, c, load.Options{})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	var kinds map[string]*KindSummary
	if ok, berr := res.Summary.Block(BlockKinds, &kinds); !ok || berr != nil {
		t.Fatalf("summary.kinds: %v %v (run: %v)", ok, berr, err)
	}
	return res, kinds, err
}

// TestRoomsRefserver: the rooms file against refserver's /rooms: 20 users
// in 2 rooms of 10, one editor each at 2 patches/s, presence at 20/s.
func TestRoomsRefserver(t *testing.T) {
	res, k := runRooms(t, refserver.Config{}, 20)
	patch, op, ack, presence := k["patch"], k["op"], k["ack"], k["presence"]
	// 2 editors x 2/s x 1 s.
	if patch.Sent < 3 || patch.Sent > 5 {
		t.Errorf("patch.sent = %d, want about 4", patch.Sent)
	}
	if op.Sent != patch.Sent || *op.Expected != 9*patch.Sent || op.Received != *op.Expected {
		t.Errorf("op: sent %d, received %d of %d", op.Sent, op.Received, *op.Expected)
	}
	if ack.Received != patch.Sent || *ack.Expected != patch.Sent {
		t.Errorf("ack: received %d of %d", ack.Received, *ack.Expected)
	}
	// 20 users x 20/s x 1 s; coalesced on the 50 ms beat, never one's own.
	if presence.Sent < 380 || presence.Received == 0 || presence.Expected != nil || presence.Own != 0 {
		t.Errorf("presence: %+v", presence)
	}
	checkLatency(t, "op", op.Latency)
	checkLatency(t, "ack", ack.Latency)
	checkLatency(t, "presence", presence.Latency)
	if op.Gaps+ack.Gaps != 0 || len(res.Summary.ErrorsByReason) != 0 {
		t.Errorf("gaps %d/%d, errors %v", op.Gaps, ack.Gaps, res.Summary.ErrorsByReason)
	}
	var unmatched int64
	if res.Summary.Block(BlockUnmatched, &unmatched); unmatched != 0 {
		t.Errorf("unmatched = %d", unmatched)
	}
	// The file's objective evaluates on this summary: every path it names
	// is there (met or not depends on the machine; only presence is
	// checked to be found).
	spec, err := ParseFile(roomsFile)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := objective.Parse(spec.Objective)
	if err != nil {
		t.Fatal(err)
	}
	r, err := obj.Eval(res.Summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Conditions {
		if c.Got == nil {
			t.Errorf("objective condition %q: %s", c.Text, c.Why)
		}
	}
	if res.Summary.Mode != "open" || *res.Summary.RequestedOpsPerS != 2*2+20*20 {
		t.Errorf("mode %s, requested %v", res.Summary.Mode, res.Summary.RequestedOpsPerS)
	}
	// The connections ran on the event loops, which say how busy they were.
	g := res.Generator
	if g.Engine != load.EngineLoop || g.Loops == nil || g.Loops.Count < 1 || len(g.Loops.BusyFraction) != g.Loops.Count {
		t.Errorf("generator engine %q, loops %+v", g.Engine, g.Loops)
	}
	if g.ScheduleLag.Count == 0 || g.ReadSyscalls == 0 {
		t.Errorf("schedule lag %+v, read syscalls %d", g.ScheduleLag, g.ReadSyscalls)
	}
}

// TestRoomsRefserverGaps: --rooms-skip-every 2 bumps every 2nd patch's
// version by 2, so every member sees a gap.
func TestRoomsRefserverGaps(t *testing.T) {
	_, k := runRooms(t, refserver.Config{RoomsSkipEvery: 2}, 20)
	op, ack := k["op"], k["ack"]
	if op.Gaps == 0 || ack.Gaps == 0 {
		t.Errorf("no gaps seen with --rooms-skip-every 2: op %d, ack %d", op.Gaps, ack.Gaps)
	}
	if op.Received != *op.Expected {
		t.Errorf("op: %d of %d", op.Received, *op.Expected)
	}
}

// TestRoomsRefserverRateLimit: a limit of 1 message/s refuses about half
// the patches at 2/s; the error names the patch's id.
func TestRoomsRefserverRateLimit(t *testing.T) {
	res, k := runRooms(t, refserver.Config{RoomsRateLimit: 1}, 20)
	patch, ack := k["patch"], k["ack"]
	if patch.RateLimited == 0 || ack.Received+patch.RateLimited != patch.Sent {
		t.Errorf("patch %+v, acked %d, errors %v", patch, ack.Received, res.Summary.ErrorsByReason)
	}
}

// TestTarget: the sweep's target block names the file; its objective is
// the sweep's default; a ladder the roles do not fit is refused.
func TestTarget(t *testing.T) {
	blk, err := parseTarget([]byte(`{"url": "ws://{addr}", "file": "` + roomsFile + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	if blk.URL() != "ws://{addr}" || strings.Join(blk.Args(), " ") != "--scenario-file "+roomsFile || blk.URLField() != "script.url" {
		t.Fatalf("block %+v", blk)
	}
	if o := blk.(load.ObjectiveBlock).Objective(); !strings.HasPrefix(o, "kinds.op.latency_ns.p99") {
		t.Fatalf("objective %q", o)
	}
	if err := blk.CheckLadder(1); err != nil {
		t.Fatal(err)
	}
	if _, err := parseTarget([]byte(`{"url": "ws://{addr}", "file": "testdata/bad-share.json"}`)); err == nil || !strings.HasPrefix(err.Error(), "file: testdata/bad-share.json: roles[0].share: 1.5") {
		t.Fatalf("bad file: %v", err)
	}
	if _, err := parseTarget([]byte(`{"url": "ws://{addr}", "fil": "x"}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
	b, _ := os.ReadFile(chatFile)
	file := filepath.Join(t.TempDir(), "counted.json")
	os.WriteFile(file, []byte(strings.Replace(string(b), `"share": 0.25`, `"count": 9`, 1)), 0o644)
	counted, err := parseTarget([]byte(`{"url": "ws://{addr}", "file": "` + file + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := counted.CheckLadder(8); err == nil || !strings.Contains(err.Error(), "the roles' counts need 9 connections, more than the 8 connections of the smallest rung") {
		t.Fatalf("ladder of 8 for 9 counted: %v", err)
	}
}
