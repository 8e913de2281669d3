package harness

import (
	"testing"
)

// Every placeholder is filled, {port2} apart from {port} (the replacer
// must not read "{port2}" as "{port}" followed by "2").
func TestExpandEveryPlaceholder(t *testing.T) {
	a := PointAddr{Port: 4100, Port2: 4200, WorkDir: "/w/point-001"}
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
	tg := TargetSpec{
		Command: []string{"srv", "--ws", "{port}", "-m", "{port2}", "-sd", "{workdir}/js"},
		Ready:   "http://{host}:{port2}/healthz",
	}
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
}
