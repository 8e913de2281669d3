package main

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

func TestJudgeCheck(t *testing.T) {
	okPoint := func(i int) result.Point {
		return result.Point{Index: i, Status: result.StatusOK, Batch: 10, Connections: 32, ThroughputPerS: 1e5, Clean: true}
	}
	contended := func(i int) result.Point {
		p := okPoint(i)
		p.Clean, p.Contended = false, true
		return p
	}
	failedPoint := func(i int, why, tail string) result.Point {
		return result.Point{Index: i, Status: result.StatusFailed, FailReason: why, LogTail: tail}
	}
	withErrors := func(i int) result.Point {
		p := okPoint(i)
		p.Clean, p.Errors = false, 7
		return p
	}
	dead := "server never became ready: exited (exit status 1)"
	for _, c := range []struct {
		name   string
		curve  []result.Point
		failed bool
		ok     bool
		want   []string
	}{
		{"clean", []result.Point{okPoint(1), okPoint(2)}, false, true, []string{"boots and answers: 2 of 2 points ran"}},
		// The dead server of issue 33: init said "boots and answers".
		{"never ready", []result.Point{failedPoint(1, dead, "Error: Cannot find module 'ws'\n    at node:internal"), failedPoint(2, dead, "")}, true, false,
			[]string{"does not work", "point 1 failed: " + dead, "\n  Error: Cannot find module 'ws'\n      at node:internal"}},
		// A busy machine: the points ran, on CPUs others took.
		{"contended", []result.Point{contended(1), contended(2), okPoint(3)}, true, true,
			[]string{"boots and answers: 3 of 3", "2 ran on CPUs that other work or the hypervisor took"}},
		{"only errors", []result.Point{withErrors(1), failedPoint(2, "x", "")}, true, false, []string{"answers with errors: point 1", "had 7"}},
		{"errors beside clean", []result.Point{okPoint(1), withErrors(2)}, false, true, []string{"boots and answers: 1 of 2", "point 2 had 7 errors"}},
		{"crash under load", []result.Point{okPoint(1), failedPoint(2, "server exited during the point", "")}, true, true,
			[]string{"1 of 2 points ran", "point 2 failed: server exited during the point", "no clean headline"}},
		{"no point", nil, true, false, []string{"ran no point"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, msg := judgeCheck(&result.Result{Curve: c.curve}, c.failed)
			if ok != c.ok {
				t.Errorf("ok %v, want %v: %s", ok, c.ok, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
