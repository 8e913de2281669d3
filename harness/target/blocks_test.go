package target_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A target file's scenario blocks are passed through raw: a target.Spec
// written (as each point's target.json is) reads back the same, blocks
// and all. The harness once lost echo_url here (issue 9's first attempt).
func TestTargetRoundTripKeepsScenarioBlocks(t *testing.T) {
	for _, file := range []string{"../../benchmark/targets/refserver.json", "../../benchmark/targets/websocketd-echo.json", "../../benchmark/targets/nats.json", "../../benchmark/targets/nats-cluster.json"} {
		tg, err := target.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "target.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := target.Load(path)
		if err != nil {
			t.Fatalf("%s written and read back: %v\n%s", file, err, b)
		}
		back.File, tg.File = "", ""
		if diff := cmp.Diff(tg, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", file, diff)
		}
		for _, sc := range []string{"echo", "fanout", "produce"} {
			want, errWant := tg.URLFor(sc)
			got, errGot := back.URLFor(sc)
			if want != got || (errWant == nil) != (errGot == nil) {
				t.Errorf("%s: URLFor(%s) = %q, %v after the round trip; want %q, %v", file, sc, got, errGot, want, errWant)
			}
		}
	}
}

// A key that is neither the harness's nor a scenario's block is refused by
// name, and a block's own errors name its field.
func TestTargetBlockErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`"echo_urll": "ws://{addr}/echo"`, `"echo_urll"`},
		{`"echo_url": 5`, "echo_url: want a string URL"},
		{`"fanout": {"url": "ws://{addr}", "app_id": "a", "key": "k", "secret": "long-enough-secret", "channels": -1}`, "fanout.channels: -1 is negative"},
		{`"fanout": {"url": "ws://{addr}", "app": "a"}`, `fanout: json: unknown field "app"`},
		{`"nats": {"url": "ws://{addr}", "keys": -2}`, "nats.keys: -2 is negative"},
		{`"nats": {"url": "ws://{addr}", "stream": "a.b"}`, `nats.stream: "a.b" is not a stream name`},
		{`"nats": {"url": ""}`, "nats.url: empty"},
	} {
		path := filepath.Join(t.TempDir(), "t.json")
		body := `{"name": "x", "command": ["x", "{addr}"], "ready": "tcp:{addr}", ` + tc.body + `}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := target.Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadTarget = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
}

// The shipped NATS target serves all four of its scenarios from one
// "nats" block: each finds the block and its URL, the point's address is
// in it, and the command, env and ready probe take the point's {port},
// {port2} and {workdir}.
func TestNATSTargetServesFourScenarios(t *testing.T) {
	tg, err := target.Load("../../benchmark/targets/nats.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"produce", "fetch", "stream", "mixed"} {
		u, err := tg.URLFor(sc)
		if err != nil || u != "ws://{addr}" {
			t.Errorf("URLFor(%s) = %q, %v", sc, u, err)
		}
		if w := tg.Warnings(sc); len(w) != 0 {
			t.Errorf("%s: %v", sc, w)
		}
	}
	a := target.Addr{Port: 4100, Port2: 4200, WorkDir: "/w/p1"}
	cmd := target.Expand(strings.Join(tg.Command, " "), a)
	if !strings.Contains(cmd, "-m 4200") || !strings.Contains(cmd, "-sd /w/p1") || target.Expand(tg.Env["CEILING_WS_PORT"], a) != "4100" {
		t.Errorf("command %q, env %v", cmd, tg.Env)
	}
	if r := target.Expand(tg.Ready, a); r != "http://127.0.0.1:4200/healthz" {
		t.Errorf("ready %q", r)
	}
}

// The cluster target boots three nodes, each naming all three route
// ports, its own websocket port through its env and its own monitoring
// port in its ready probe; the nats block lists the three client URLs,
// the first as the URL and the others as --url flags.
func TestNATSClusterTarget(t *testing.T) {
	tg, err := target.Load("../../benchmark/targets/nats-cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	if !tg.Multi() || len(tg.Servers) != 3 {
		t.Fatalf("servers %+v", tg.Servers)
	}
	a := target.Addr{Port: 4001, Port2: 4002, Ports: []int{4003, 4004, 4005, 4006, 4007, 4008, 4009}, WorkDir: "/w/p"}
	routes := "--routes nats://127.0.0.1:4003,nats://127.0.0.1:4006,nats://127.0.0.1:4009"
	for i, s := range tg.Booted() {
		ws, mon, route := 4001+3*i, 4002+3*i, 4003+3*i
		cmd := target.Expand(strings.Join(s.Command, " "), a)
		for _, want := range []string{routes, fmt.Sprintf("--cluster nats://127.0.0.1:%d", route), fmt.Sprintf("-m %d", mon), fmt.Sprintf("-sd /w/p/n%d", i+1), fmt.Sprintf("--server_name n%d", i+1)} {
			if !strings.Contains(cmd, want) {
				t.Errorf("%s: command %q lacks %q", s.Name, cmd, want)
			}
		}
		if got := target.Expand(s.Env["CEILING_WS_PORT"], a); got != fmt.Sprint(ws) {
			t.Errorf("%s: websocket port %s, want %d", s.Name, got, ws)
		}
		if got, want := target.Expand(s.Ready, a), fmt.Sprintf("http://127.0.0.1:%d/healthz", mon); got != want {
			t.Errorf("%s: ready %s, want %s", s.Name, got, want)
		}
	}
	u, err := tg.URLFor("stream")
	if err != nil || target.Expand(u, a) != "ws://127.0.0.1:4001" {
		t.Errorf("URLFor = %q, %v", u, err)
	}
	blk, _ := tg.Block("stream")
	if got := target.Expand(strings.Join(blk.Args(), " "), a); got != "--url ws://127.0.0.1:4004 --url ws://127.0.0.1:4007" {
		t.Errorf("block args %q", got)
	}
	if err := tg.CheckRunnable("stream"); err != nil && !strings.Contains(err.Error(), "bin/nats-server") {
		t.Errorf("CheckRunnable: %v", err)
	}
}

// A nats block gives url or urls, and every one of urls must take one of
// the point's ports (or the sweep runs some other server).
func TestNATSBlockURLs(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`"nats": {"url": "ws://{addr}", "urls": ["ws://{addr}"]}`, "nats.urls: give url (one server) or urls (several nodes of one cluster), not both"},
		{`"nats": {"urls": ["ws://{addr}", ""]}`, "nats.urls[1]: empty"},
		{`"nats": {}`, "nats.url: empty"},
	} {
		path := filepath.Join(t.TempDir(), "t.json")
		body := `{"name": "x", "command": ["x", "{addr}"], "ready": "tcp:{addr}", ` + tc.body + `}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := target.Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadTarget = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
	tg := target.Spec{Command: []string{"sh", "{port}"}, Ready: "tcp:{addr}"}
	tg.SetBlock("nats", []byte(`{"urls": ["ws://{addr}", "ws://127.0.0.1:4222"]}`))
	if err := tg.CheckRunnable("stream"); err == nil || !strings.Contains(err.Error(), `the URL #2, "ws://127.0.0.1:4222", does not name a point's address`) {
		t.Errorf("CheckRunnable = %v, want the unpinned second URL named", err)
	}
}
