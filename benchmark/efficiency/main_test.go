package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
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

var ratioRE = regexp.MustCompile(`msg/s ([0-9.]+)x; msg per CPU-second ([0-9.]+)x`)

// The receive and send comparisons run end to end (children pinned,
// servers on loopback) and print positive ratios. Speed is not asserted.
func TestPairSections(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-skip-echo", "-duration", "300ms", "-warmup", "100ms", "-reps", "1"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"1. Receive path", "wsconn ReadMessage", "gorilla NextReader", "2. Send path", "wsconn WriteBatch"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	m := ratioRE.FindAllStringSubmatch(text, -1)
	if len(m) != 2 {
		t.Fatalf("found %d ratio lines, want 2:\n%s", len(m), text)
	}
	for _, r := range m {
		for _, v := range r[1:] {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
				t.Errorf("ratio %q is not a positive number:\n%s", v, text)
			}
		}
	}
}

// The refserver echo points with the built-in loop, plain and with
// ExpectBytes, against a refserver built from this module.
func TestEchoSectionBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds refserver")
	}
	var out bytes.Buffer
	err := run([]string{"-generator", "builtin", "-refserver", "/nonexistent/refserver", "-duration", "300ms", "-echo-duration", "300ms", "-warmup", "100ms",
		"-echo-conns", "4", "-reps", "1", "-skip-echo=false"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	rows := regexp.MustCompile(`(?m)^\s+(1|10|100)\s+builtin wsconn loop( \+ ExpectBytes|, eager reads)?\s+[0-9.]+ [kM]?`).FindAllString(text, -1)
	if len(rows) != 5 {
		t.Errorf("found %d echo rows, want 5 (batch 1, and 10 and 100 with and without ExpectBytes):\n%s", len(rows), text)
	}
	if strings.Contains(text, "ERRORS") {
		t.Errorf("echo run had errors:\n%s", text)
	}
	// The syscall-only floor runs at every batch, and every row gets its
	// multiple of the floor (speed is not asserted).
	if floors := regexp.MustCompile(`(?m)^\s+(1|10|100)\s+syscall-only floor\s+[0-9.]+ [kM]?`).FindAllString(text, -1); len(floors) != 3 {
		t.Errorf("found %d floor rows, want 3 (batch 1, 10, 100):\n%s", len(floors), text)
	}
	_, multiples, ok := strings.Cut(text, "floor multiples")
	if !ok {
		t.Fatalf("no floor multiples table:\n%s", text)
	}
	if rows := regexp.MustCompile(`(?m)^\s+(1|10|100)\s+(syscall-only floor|builtin wsconn loop[^0-9>n]*)\s+(1\.00x|[0-9.]+x|>[0-9.]+x|n/a)`).FindAllString(multiples, -1); len(rows) != 8 {
		t.Errorf("found %d rows of floor multiples, want 8 (3 floors, 5 builtin):\n%s", len(rows), multiples)
	}
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
