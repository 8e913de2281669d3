//go:build e2e

package main

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var ratioRE = regexp.MustCompile(`msg/s ([0-9.]+)x; msg per CPU-second ([0-9.]+)x`)

// The receive and send comparisons run end to end (children pinned,
// servers on loopback) and print positive ratios. Speed is not asserted.
func testPairSections(t *testing.T) {
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
func testEchoSectionBuiltin(t *testing.T) {
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

// TestSections: make bench's sections end to end, children pinned and
// servers on loopback: the receive and send comparisons, and refserver's
// echo points with the built-in loop.
func TestSections(t *testing.T) {
	t.Run("pair sections", testPairSections)
	t.Run("echo section builtin", testEchoSectionBuiltin)
}
