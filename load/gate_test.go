package load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two gated generators wait for their gates, and both start at the one
// instant the coordinator wrote, whenever each became ready.
func TestStartGate(t *testing.T) {
	dir := t.TempDir()
	gates := []string{filepath.Join(dir, "a.gate"), filepath.Join(dir, "b.gate")}
	type got struct {
		at  int64
		err error
	}
	ch := make(chan got, 2)
	for i, g := range gates {
		go func() {
			time.Sleep(time.Duration(i) * 30 * time.Millisecond) // b is ready later
			at, err := gateStart(g)(context.Background(), 1)
			ch <- got{at, err}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, g := range gates {
		for {
			if _, err := os.Stat(GateReady(g)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never appeared", GateReady(g))
			}
			time.Sleep(time.Millisecond)
		}
	}
	// A second ahead: a generator that reads its gate late (a busy
	// machine) would start at once, not at the gate's time.
	start := time.Now().Add(time.Second)
	wantMono := Mono() + int64(time.Second)
	if err := OpenGates(start, gates...); err != nil {
		t.Fatal(err)
	}
	var ats []int64
	for range gates {
		g := <-ch
		if g.err != nil {
			t.Fatal(g.err)
		}
		ats = append(ats, g.at)
	}
	for _, at := range ats {
		if d := time.Duration(at - wantMono); d < -20*time.Millisecond || d > 20*time.Millisecond {
			t.Errorf("a generator starts %v from the gate's time", d)
		}
	}
	if d := time.Duration(ats[0] - ats[1]); d < -10*time.Millisecond || d > 10*time.Millisecond {
		t.Errorf("the two starts differ by %v", d)
	}
}

// A gate that never opens ends with the run's context, and a gate that
// holds no time is an error naming the flag.
func TestStartGateCancelAndGarbage(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := gateStart(filepath.Join(dir, "never"))(ctx, 1); err == nil {
		t.Fatal("a gate that never opened returned no error")
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := gateStart(bad)(context.Background(), 1)
	if err == nil || !strings.Contains(err.Error(), "--start-gate") {
		t.Fatalf("garbage gate: %v, want an error naming --start-gate", err)
	}
}
