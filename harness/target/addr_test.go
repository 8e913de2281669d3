package target

import (
	"strings"
	"testing"
)

// Every placeholder is filled, {port2} apart from {port} (the replacer
// must not read "{port2}" as "{port}" followed by "2").
func TestExpandEveryPlaceholder(t *testing.T) {
	a := Addr{Port: 4100, Port2: 4200, WorkDir: "/w/point-001"}
	got := Expand("{addr} {host} {port} {port2} {workdir}/js -m={port2}", a)
	if want := "127.0.0.1:4100 127.0.0.1 4100 4200 /w/point-001/js -m=4200"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	for range 20 {
		p, p2, err := FreePorts()
		if err != nil {
			t.Fatal(err)
		}
		if p == p2 || p <= 0 || p2 <= 0 {
			t.Fatalf("ports %d and %d", p, p2)
		}
	}
}

// A ready probe on {port2} and a command using {workdir} pass Check: the
// syntax check fills them with stand-ins.
func TestCheckAcceptsPort2AndWorkdir(t *testing.T) {
	tg := Spec{
		Command: []string{"srv", "--ws", "{port}", "-m", "{port2}", "-sd", "{workdir}/js"},
		Ready:   "http://{host}:{port2}/healthz",
	}
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
}

// {portN} names the point's N-th free port, {port3} on: a cluster's node
// names its peers' route ports. {port2} and {port20} are not read as
// {port} followed by digits, and a {portN} the point has no port for is
// left as written.
func TestExpandNumberedPorts(t *testing.T) {
	a := Addr{Port: 4100, Port2: 4200, Ports: []int{4300, 4400, 4500, 4600, 4700, 4800, 4900}, WorkDir: "/w/p"}
	got := Expand("{addr} {port} {port1} {port2} {port3} {port9} --routes nats://{host}:{port3},nats://{host}:{port6} {port10} {port20} {workdir}", a)
	want := "127.0.0.1:4100 4100 4100 4200 4300 4900 --routes nats://127.0.0.1:4300,nats://127.0.0.1:4600 {port10} {port20} /w/p"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if n := (Spec{Servers: []Server{{Command: []string{"x", "{port9}"}}, {Ready: "tcp:{host}:{port4}"}}}).PortsUsed(); n != 9 {
		t.Errorf("portsUsed = %d, want 9", n)
	}
	if n := (Spec{Command: []string{"x", "{port}"}}).PortsUsed(); n != 2 {
		t.Errorf("portsUsed = %d, want 2 (every point has {port} and {port2})", n)
	}
	if got := PortsNamed("{addr} {port2} nats://{host}:{port6} {port6}"); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 6 {
		t.Errorf("portsNamed = %v, want [1 2 6]", got)
	}
}

func TestFreePortsNAreDistinct(t *testing.T) {
	ps, err := FreePortsN(9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v", ps)
		}
		seen[p] = true
	}
}

// A target of several servers: each is checked by its index, the top
// level holds no command or ready, names are unique, and Booted gives
// every server the top-level env under its own.
func TestCheckServers(t *testing.T) {
	ok := Spec{
		Env: map[string]string{"A": "top", "B": "top"},
		Servers: []Server{
			{Name: "n1", Command: []string{"srv", "--port", "{port}", "--peer", "{port4}"}, Ready: "tcp:{addr}"},
			{Name: "n2", Command: []string{"srv"}, Env: map[string]string{"B": "own", "P": "{port4}"}, Ready: "http://{host}:{port5}/healthz"},
		},
	}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	b := ok.Booted()
	if len(b) != 2 || b[1].Env["A"] != "top" || b[1].Env["B"] != "own" || b[0].Env["B"] != "top" {
		t.Errorf("booted %+v", b)
	}
	if one := (Spec{Command: []string{"x"}, Ready: "tcp:{addr}"}).Booted(); len(one) != 1 || one[0].Name != "server" {
		t.Errorf("a one-server target boots %+v", one)
	}
	bad := ok
	bad.Command, bad.Ready = []string{"x", "{port}"}, "tcp:{addr}"
	bad.Servers = []Server{
		{Name: "n1", Command: []string{"srv", "{port}"}, Ready: "tcp:{addr}"},
		{Name: "n1", Command: []string{"srv", "{port2}"}, Ready: "tcp:{addr}"},
		{Name: "a b", Command: []string{"srv"}, Ready: "nope"},
		{Name: "n4", Ready: "tcp:{addr}"},
	}
	bad.Env = nil
	err := bad.Check()
	for _, want := range []string{
		"command: give command (one server) or servers, not both",
		"ready: with servers, each server has its own ready",
		`servers[1].name: "n1" given twice`,
		`servers[2].name: "a b"`,
		"servers[2].command/env: no {port}",
		"servers[2].ready:",
		"servers[3].command: empty",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v\nwant it to contain %q", err, want)
		}
	}
}

// TestPinnedURLParses: a URL drives the point's server only when its
// parsed host and port are the point's placeholders; a placeholder in a
// query, a subdomain, or beside a fixed host does not pin it.
func TestPinnedURLParses(t *testing.T) {
	for u, want := range map[string]bool{
		"ws://{addr}/echo":                     true,
		"ws://{addr}":                          true,
		"ws://{host}:{port}/echo":              true,
		"ws://{host}:{port7}":                  true,
		"wss://{host}:{port2}/ws?token=x":      true,
		"ws://127.0.0.1:18952/echo?x={port}":   false,
		"ws://127.0.0.1:18952/{addr}":          false,
		"ws://{host}.evil.example:{port}/echo": false,
		"ws://evil.example:{port}/echo":        false,
		"ws://127.0.0.1:{port}/echo":           false,
		"ws://{host}:41001/echo":               false,
		"ws://{host}:8080/echo":                false,
		"ws://{host}/echo":                     false,
		"ws://user:{port}@{host}:9/echo":       false,
		"not a url {addr} %zz":                 false,
	} {
		if got := pinnedURL(u); got != want {
			t.Errorf("pinnedURL(%q) = %v, want %v", u, got, want)
		}
	}
}
