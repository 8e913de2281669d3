package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// run drives the scenario file (after edit) against url the way load.Run
// does: Validate, New, Connect each, Load over a window, merge, Finish.
func run(t *testing.T, file, url string, edit func(string) string, conns int, warm, dur, drain time.Duration) (*scenario, *load.Recorder) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if edit != nil {
		s = edit(s)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &load.Config{URL: url, Connections: conns, Payload: "json", RecordSize: 200, Batch: 1}
	params := &Params{File: p, IO: testIO}
	if err := params.Validate(cfg, nil); err != nil {
		t.Fatal(err)
	}
	pool, err := payload.New(cfg.Payload, 1, cfg.RecordSize, payload.PoolSize(cfg.RecordSize, 1, conns))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := params.New(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range conns {
		if err := sc.Connect(ctx, i); err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
	}
	open := load.Mono()
	w := load.Window{Open: open, Start: open + int64(warm), End: open + int64(warm+dur), Drain: open + int64(warm+dur+drain)}
	lastWindow = w
	merged := load.NewRecorder(true, true)
	for _, r := range sc.Load(ctx, w) {
		merged.Merge(r)
	}
	sc.Finish(&load.Result{}, merged)
	if got := sc.(*scenario).Engine(); got != map[string]string{IOLoop: load.EngineLoop, IOGoroutines: load.EngineGoroutines}[params.IO] {
		t.Errorf("--io %s ran on %s", params.IO, got)
	}
	return sc.(*scenario), merged
}

// lastWindow is the measured window of run's latest load.
var lastWindow load.Window

// testIO is the engine run uses: the tests run on the loops, and again on
// goroutines in TestChatGoroutines.
var testIO = IOLoop

// TestChatGoroutines: the chat tests again on the goroutine engine (--io
// goroutines), which must measure the same.
func TestChatGoroutines(t *testing.T) {
	testIO = IOGoroutines
	defer func() { testIO = IOLoop }()
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"OpenLoop", TestChatOpenLoop}, {"GapsAndRateLimit", TestChatGapsAndRateLimit}, {"ClosedLoop", TestChatClosedLoop},
		{"HTTPPublish", TestChatHTTPPublish}, {"RateLimitCloseCode", TestChatRateLimitCloseCode}, {"JoinedFrames", TestChatJoinedFrames},
	} {
		t.Run(tc.name, tc.f)
	}
}

func checkLatency(t *testing.T, kind string, l load.Latency) {
	t.Helper()
	if l.Count == 0 || l.Min <= 0 {
		t.Errorf("%s: no latency: %+v", kind, l)
		return
	}
	if !(l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("%s: percentiles out of order: %+v", kind, l)
	}
	if l.Max > int64(5*time.Second) {
		t.Errorf("%s: max %v is implausible on loopback", kind, time.Duration(l.Max))
	}
}

const chatFile = "testdata/chat.json"

// testDrain is how long the chat tests' runs await the relays and acks
// of what was sent in the window. Every one must arrive (the tests count
// them exactly): on a machine whose CPUs other work shares, a relay can
// take far longer than on a quiet one (500 ms lost some at a load
// average of 10), so the drain is long; a run ends at it whatever
// arrived.
const testDrain = 2 * time.Second

// TestChatOpenLoop: 12 connections in rooms of 4, one talker per room at
// 50/s. Every say is heard by the 3 others and acked; the handshake waits
// past a motd and a delayed welcome; application pings are answered.
func TestChatOpenLoop(t *testing.T) {
	cs := startChat(t, &chatServer{pingEvery: 20 * time.Millisecond, welcomeIn: 30 * time.Millisecond})
	s, merged := run(t, chatFile, cs.url, nil, 12, 200*time.Millisecond, time.Second, testDrain)
	k := s.Kinds()
	say, heard, ok := k["say"], k["heard"], k["ok"]
	if say.Type != "send" || heard.Type != "relay" || ok.Type != "ack" || k["motd"].Type != "ignore" {
		t.Fatalf("types: %+v", k)
	}
	// 3 talkers x 50/s x 1 s, give or take the phase of each schedule.
	if say.Sent < 140 || say.Sent > 160 {
		t.Errorf("say.sent = %d, want about 150", say.Sent)
	}
	if heard.Sent != say.Sent || *heard.Expected != 3*say.Sent || heard.Received != *heard.Expected {
		t.Errorf("heard: sent %d expected %v received %d; say.sent %d", heard.Sent, *heard.Expected, heard.Received, say.Sent)
	}
	if *ok.Expected != say.Sent || ok.Received != say.Sent {
		t.Errorf("ok: expected %v received %d; say.sent %d", *ok.Expected, ok.Received, say.Sent)
	}
	if *heard.DeliveredPct != 100 || *ok.DeliveredPct != 100 {
		t.Errorf("delivered: heard %v ok %v", *heard.DeliveredPct, *ok.DeliveredPct)
	}
	if heard.Gaps != 0 || ok.Gaps != 0 || heard.Own != 0 || say.RateLimited != 0 {
		t.Errorf("gaps %d/%d own %d rate-limited %d, want 0", heard.Gaps, ok.Gaps, heard.Own, say.RateLimited)
	}
	checkLatency(t, "heard", heard.Latency)
	checkLatency(t, "ok", ok.Latency)
	if heard.Latency.Count != heard.Received || ok.Latency.Count != ok.Received {
		t.Errorf("latency counts %d/%d vs received %d/%d", heard.Latency.Count, ok.Latency.Count, heard.Received, ok.Received)
	}
	if merged.Messages != heard.Received+ok.Received || merged.Ops != say.Sent || merged.OK != say.Sent {
		t.Errorf("recorder: messages %d ops %d ok %d", merged.Messages, merged.Ops, merged.OK)
	}
	if merged.Lag == nil || merged.Lag.Count() != say.Sent {
		t.Errorf("schedule lag not recorded per send")
	}
	if len(merged.Errors) != 0 {
		t.Errorf("errors: %v", merged.Errors)
	}
	if cs.pongs.Load() == 0 {
		t.Error("no pong answered the server's pings")
	}
	if s.Unmatched() != 0 {
		t.Errorf("unmatched = %d (pings are answers, everything else has a kind)", s.Unmatched())
	}
}

// TestChatGapsAndRateLimit: the server skips a sequence number every 5th
// say and accepts only 20 says per connection; refusals name the say.
func TestChatGapsAndRateLimit(t *testing.T) {
	cs := startChat(t, &chatServer{skipEvery: 5, limit: 20})
	s, merged := run(t, chatFile, cs.url, nil, 8, 200*time.Millisecond, time.Second, testDrain)
	k := s.Kinds()
	say, heard, ok := k["say"], k["heard"], k["ok"]
	if say.RateLimited == 0 {
		t.Fatalf("say.rate_limited = 0 with a limit of 20 per connection: %+v", say)
	}
	if ok.Received+say.RateLimited != say.Sent {
		t.Errorf("every say in the window is acked or refused: ok %d + limited %d != sent %d", ok.Received, say.RateLimited, say.Sent)
	}
	if *ok.DeliveredPct >= 100 || heard.Received >= *heard.Expected {
		t.Errorf("refused says were counted delivered: ok %v%%, heard %d of %d", *ok.DeliveredPct, heard.Received, *heard.Expected)
	}
	// Accepted says in the window: each skips a number every 5th, seen by
	// the talker (ok) and by 3 listeners (heard).
	if heard.Gaps == 0 || ok.Gaps == 0 {
		t.Errorf("gaps heard %d ok %d, want > 0", heard.Gaps, ok.Gaps)
	}
	if heard.Gaps != 3*ok.Gaps {
		t.Errorf("heard.gaps %d != 3 x ok.gaps %d (every listener sees each skip)", heard.Gaps, ok.Gaps)
	}
	if merged.Errors["rate_limited"] != say.RateLimited {
		t.Errorf("errors_by_reason.rate_limited = %d, want %d", merged.Errors["rate_limited"], say.RateLimited)
	}
}

// TestChatClosedLoop: talkers send, await their ok, send again.
func TestChatClosedLoop(t *testing.T) {
	cs := startChat(t, &chatServer{})
	s, merged := run(t, chatFile, cs.url, func(f string) string {
		return strings.Replace(f, `"rate": 50,`, `"closed": {"await": "ok", "timeout_ms": 2000},`, 1)
	}, 8, 100*time.Millisecond, 500*time.Millisecond, testDrain)
	k := s.Kinds()
	if k["say"].Sent < 10 {
		t.Fatalf("closed loop sent %d", k["say"].Sent)
	}
	if k["ok"].Received != k["say"].Sent || merged.OK != k["say"].Sent {
		t.Errorf("ok received %d, recorder ok %d, sent %d", k["ok"].Received, merged.OK, k["say"].Sent)
	}
	if k["heard"].Received != *k["heard"].Expected {
		t.Errorf("heard %d of %d", k["heard"].Received, *k["heard"].Expected)
	}
	checkLatency(t, "ok", k["ok"].Latency)
	if merged.Lag.Count() != 0 {
		t.Error("a closed loop has no schedule")
	}
}

// TestChatHTTPPublish: a REST publisher (no WebSocket) signs its bodies;
// the listeners of its room hear them. A wrong key is a 401 per send.
func TestChatHTTPPublish(t *testing.T) {
	cs := startChat(t, &chatServer{key: "k3y"})
	publisher := func(f string) string {
		f = strings.Replace(f, `{"name": "talker", "share": 0.25, "sends": [`, `{"name": "talker", "count": 1, "websocket": false, "sends": [`, 1)
		f = strings.Replace(f, `"rate": 50, "id": "{client}-{seq}",`, `"rate": 50, "http": {"url": "{http_url}/publish/ch{room}", "sign": {"sign": "hmac_sha256", "key_env": "CHAT_TEST_KEY", "header": "X-Sig", "prefix": "sha256="}},`, 1)
		f = strings.Replace(f, `"n": "{id}", `, ``, 1)
		f = strings.Replace(f, `{"kind": "ok", "match": {"op": "ok"}, "type": "ack", "of": "say", "id": "n", "version": "s"},`, ``, 1)
		return f
	}
	t.Setenv("CHAT_TEST_KEY", "k3y")
	s, _ := run(t, chatFile, cs.url, publisher, 5, 100*time.Millisecond, 500*time.Millisecond, 300*time.Millisecond)
	k := s.Kinds()
	// 5 connections in rooms of 4 make 2 rooms; the publisher is
	// connection 0, in room 0 with listeners 2 and 4.
	if k["say"].Sent < 20 || *k["heard"].Expected != 2*k["say"].Sent || k["heard"].Received != *k["heard"].Expected {
		t.Errorf("say sent %d, heard %d of %v", k["say"].Sent, k["heard"].Received, *k["heard"].Expected)
	}
	checkLatency(t, "heard", k["heard"].Latency)
	if len(k["say"].ErrorsByReason) != 0 {
		t.Errorf("errors %v", k["say"].ErrorsByReason)
	}

	// A server that takes 1.2 s per publish holds the publisher's
	// schedule back: the run says it is saturated.
	slow := startChat(t, &chatServer{key: "k3y", slowPost: 1200 * time.Millisecond})
	_, merged := run(t, chatFile, slow.url, publisher, 5, 100*time.Millisecond, 1500*time.Millisecond, 300*time.Millisecond)
	if !strings.Contains(merged.SaturatedReason, "connection 0 sent say") {
		t.Errorf("saturated reason %q", merged.SaturatedReason)
	}

	t.Setenv("CHAT_TEST_KEY", "wrong")
	s, _ = run(t, chatFile, cs.url, publisher, 5, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	k = s.Kinds()
	if k["say"].ErrorsByReason["status_401"] != k["say"].Sent || k["say"].Sent == 0 || k["heard"].Received != 0 {
		t.Errorf("wrong key: %+v", k["say"])
	}

	// A server that refuses with 200 and an error body: without
	// http.errors each refusal passes for a success (issue 22: soketi's
	// 100 rejected publishes read "errors: 0"); with it, each is an error
	// named by the body's code.
	lenient := startChat(t, &chatServer{key: "k3y", okOnBadSig: true})
	withErrors := func(f string) string {
		return strings.Replace(publisher(f), `"prefix": "sha256="}},`, `"prefix": "sha256="}, "errors": {"match": {"code": 401}, "reason": "code"}},`, 1)
	}
	s, _ = run(t, chatFile, lenient.url, withErrors, 5, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	k = s.Kinds()
	if k["say"].Sent == 0 || k["say"].ErrorsByReason["server_401"] != k["say"].Sent || k["heard"].Received != 0 {
		t.Errorf("200 with an error body: say %+v, want every send an error server_401", k["say"])
	}
	// Without http.errors, the default http.body_code sees a JSON body's
	// code of 400 or more as the refusal it is (issue 33); a file that
	// means otherwise says "body_code": false, and then the refusals
	// pass unseen.
	s, _ = run(t, chatFile, lenient.url, publisher, 5, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	if say := s.Kinds()["say"]; say.Sent == 0 || say.ErrorsByReason["server_401"] != say.Sent {
		t.Errorf("without http.errors: say %+v, want every send an error server_401 (body_code's default)", say)
	}
	optOut := func(f string) string {
		return strings.Replace(publisher(f), `"prefix": "sha256="}},`, `"prefix": "sha256="}, "body_code": false},`, 1)
	}
	s, _ = run(t, chatFile, lenient.url, optOut, 5, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	if say := s.Kinds()["say"]; say.Sent == 0 || len(say.ErrorsByReason) != 0 {
		t.Errorf("body_code false: say %+v, want the refusals unseen", say)
	}
	t.Setenv("CHAT_TEST_KEY", "k3y")
	s, _ = run(t, chatFile, lenient.url, withErrors, 5, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	if say := s.Kinds()["say"]; say.Sent == 0 || len(say.ErrorsByReason) != 0 {
		t.Errorf("the right key with http.errors: say %+v, want no error", say)
	}
}

// TestChatHandshakeFail: a fail match during the handshake fails the
// connection with the server's answer.
func TestChatHandshakeFail(t *testing.T) {
	cs := startChat(t, &chatServer{})
	b, _ := os.ReadFile(chatFile)
	spec, err := Parse([]byte(strings.Replace(string(b), `"chan": "ch{room}"`, `"chan": "forbidden"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &load.Config{URL: cs.url, Connections: 1, Payload: "constant", RecordSize: 8}
	pool, _ := payload.New("constant", 1, 8, 1)
	sc, err := newScenario(cfg, pool, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = sc.Connect(context.Background(), 0)
	if err == nil || !strings.Contains(err.Error(), `handshake failed: the server answered {"op":"denied"}`) {
		t.Fatalf("err = %v", err)
	}
	// The server's answer: every point would meet it (a sweep stops at
	// the first point where every connection did).
	var rf *load.Refused
	if !errors.As(err, &rf) {
		t.Errorf("a handshake fail match is not a load.Refused: %T", err)
	}
}

// TestChatRateLimitCloseCode: a server that closes a connection with a
// rate-limit close code counts one rate_limited send, not an error.
func TestChatRateLimitCloseCode(t *testing.T) {
	cs := startChat(t, &chatServer{closeAt: 20})
	s, merged := run(t, chatFile, cs.url, func(f string) string {
		return strings.Replace(f, `"rate_limited": {"match": {"op": "err", "code": "slow"}, "id": "n"}`, `"rate_limited": {"match": {"op": "err", "code": "slow"}, "id": "n", "close_codes": [4429]}`, 1)
	}, 8, 200*time.Millisecond, time.Second, 300*time.Millisecond)
	say := s.Kinds()["say"]
	// Two talkers, each closed at its 20th say (inside the window).
	if say.RateLimited != 2 || merged.Errors["rate_limited"] != 2 || merged.Dropped != 2 {
		t.Fatalf("rate_limited %d, errors %v, dropped %d; want 2 closes counted", say.RateLimited, merged.Errors, merged.Dropped)
	}
	if len(say.ErrorsByReason) != 0 {
		t.Errorf("a rate-limit close is not an error of the send: %v", say.ErrorsByReason)
	}
}

// TestChatSubprotocolRequired: without the file's subprotocol the server
// refuses the upgrade.
func TestChatSubprotocolRequired(t *testing.T) {
	cs := startChat(t, &chatServer{})
	b, _ := os.ReadFile(chatFile)
	spec, err := Parse([]byte(strings.Replace(string(b), `"subprotocol": "chat.v1",`, ``, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &load.Config{URL: cs.url, Connections: 1, Payload: "constant", RecordSize: 8}
	pool, _ := payload.New("constant", 1, 8, 1)
	sc, err := newScenario(cfg, pool, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Connect(context.Background(), 0); load.Reason(err) != "handshake_400" {
		t.Fatalf("err = %v, want a 400 upgrade", err)
	}
}

// TestChatHandshakeTimeout: connect.timeout_ms bounds the await of the
// handshake's reply.
func TestChatHandshakeTimeout(t *testing.T) {
	cs := startChat(t, &chatServer{welcomeIn: 3 * time.Second})
	b, _ := os.ReadFile(chatFile)
	spec, err := Parse([]byte(strings.Replace(string(b), `"timeout_ms": 5000`, `"timeout_ms": 300`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &load.Config{URL: cs.url, Connections: 1, Payload: "constant", RecordSize: 8}
	pool, _ := payload.New("constant", 1, 8, 1)
	sc, err := newScenario(cfg, pool, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = sc.Connect(context.Background(), 0)
	if err == nil || load.Reason(err) != "timeout" || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v (%s) after %v", err, load.Reason(err), time.Since(start))
	}
}

// TestChatJoinedFrames: a server that joins queued messages into one frame,
// one per line (Centrifugo, gorilla's chat example), and pings with {}.
// With connect.split "newline" every message of a frame is counted, the
// handshake's awaited reply is found behind another in the same frame,
// and the {} pings are answered through a match of {}.
func TestChatJoinedFrames(t *testing.T) {
	cs := startChat(t, &chatServer{joinFrames: true, emptyPing: true, pingEvery: 20 * time.Millisecond})
	split := func(s string) string {
		s = strings.Replace(s, `"timeout_ms": 5000,`, `"timeout_ms": 5000, "split": "newline",`, 1)
		return strings.Replace(s, `"answers": [{"match": {"op": "ping"}, "reply": {"op": "pong"}}]`, `"answers": [{"match": {}, "reply": {}}]`, 1)
	}
	s, merged := run(t, chatFile, cs.url, split, 12, 200*time.Millisecond, time.Second, testDrain)
	k := s.Kinds()
	heard, ok := k["heard"], k["ok"]
	if cs.multi.Load() == 0 {
		t.Fatal("the server never joined two messages into a frame: the test proves nothing")
	}
	if heard.Received != *heard.Expected || ok.Received != *ok.Expected || heard.Received == 0 {
		t.Errorf("heard %d of %d, ok %d of %d: messages of joined frames were lost", heard.Received, *heard.Expected, ok.Received, *ok.Expected)
	}
	if cs.pongs.Load() == 0 || s.Unmatched() != 0 || len(merged.Errors) != 0 {
		t.Errorf("pongs %d, unmatched %d, errors %v", cs.pongs.Load(), s.Unmatched(), merged.Errors)
	}

	// Without split the same server loses messages, and the run says so.
	// The welcome in a frame of its own: no split needed to connect. (A
	// 30-ms pause before it once stood for that, and lost to a busy
	// machine: the flusher ran late, joined the welcome to the motd, and
	// the handshake timed out.)
	cs2 := startChat(t, &chatServer{joinFrames: true, welcomeAlone: true})
	s2, _ := run(t, chatFile, cs2.url, nil, 12, 200*time.Millisecond, time.Second, testDrain)
	// (Checked only when the server did put a heard behind another
	// message inside the measured window, away from its edges: it joins
	// what queued within its 3 ms tick, a joined frame may hold no heard
	// past its first line, and one hidden in the warm-up or the drain is
	// not a heard the window expects.)
	margin := int64(100 * time.Millisecond)
	inWindow := cs2.hiddenBetween(lastWindow.Start+margin, lastWindow.End-margin)
	if h := s2.Kinds()["heard"]; inWindow > 0 && h.Received >= *h.Expected {
		t.Errorf("without split: heard %d of %d expected, though %d were hidden in joined frames within the window; want fewer", h.Received, *h.Expected, inWindow)
	} else {
		t.Logf("without split: heard %d of %d expected; %d hidden within the window, %d in all", h.Received, *h.Expected, inWindow, cs2.hidden.Load())
	}
}

// TestBodyCodeFailed is http.body_code's rule on its own: a top-level
// numeric code from 400 fails the send; a success code, a nested or
// string code, and a body that is not JSON do not.
func TestBodyCodeFailed(t *testing.T) {
	for body, want := range map[string]string{
		`{"code":401,"message":"bad signature"}`: "server_401",
		`{"error":"x","code": 503}`:              "server_503",
		`{"code":200}`:                           "",
		`{"code":"401"}`:                         "",
		`{"data":{"code":401}}`:                  "",
		`{"code":401.5}`:                         "",
		`{"code":4010}`:                          "",
		`ok`:                                     "",
		``:                                       "",
	} {
		err := bodyCodeFailed([]byte(body))
		got := ""
		if err != nil {
			got = httpReason(err)
		}
		if got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
