package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play the children's roles: the benchmark
// re-runs its own executable with -role, and under `go test` that is this
// binary.
func TestMain(m *testing.M) {
	pinning.Init()
	if len(os.Args) > 1 && os.Args[1] == "-role" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 123 45 0 0 20 0 3 0 99 1000 10 18446744073709551615"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := cpuTimes{user: 1230 * time.Millisecond, sys: 450 * time.Millisecond}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(cpuTimes{})); d != "" {
		t.Errorf("parseStat (-want +got):\n%s", d)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestReadCPUOfSelf(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for {
		c, err := readCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if c.user+c.sys > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no CPU accounted to this process after 5 s of spinning")
		}
		for i := range 10_000_000 { // burn a few ms
			x += i
		}
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-generator", "node"}, "-generator"},
		{[]string{"-duration", "0s"}, "-duration"},
		{[]string{"-reps", "0"}, "-reps"},
		{[]string{"-echo-duration", "-1s"}, "-echo-duration"},
		{[]string{"-role", "dance"}, "-role"},
		{[]string{"-only", "send"}, "-only"},
		{[]string{"-nope"}, "nope"},
	} {
		err := run(tt.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) = %v, want an error naming %s", tt.args, err, tt.want)
		}
	}
}
