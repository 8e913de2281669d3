//go:build e2e

package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// A point fills {port2} and {workdir} everywhere the harness reads the
// target: the server's command (a second refserver listens on {port2}),
// its readiness probe (answered only on {port2}) and a file the command
// writes into {workdir}, which must be the point's own directory.
func TestPointPort2AndWorkdir(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	tg := refTarget(t)
	ref := filepath.Join(bin, "refserver")
	tg.Command = []string{"sh", "-c", "echo {port} {port2} > {workdir}/ports && " + ref + " --addr 127.0.0.1:{port2} & exec " + ref + " --addr {addr}"}
	tg.Ready = "http://127.0.0.1:{port2}/health"
	tg.Metrics = nil
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
	r, _, err := runSweepOnce(t, context.Background(), o, tg)
	if _, err := contentionIsNotTheSubject(t, r, err); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(o.WorkDir, "point-*", "ports"))
	if len(files) != len(r.Curve) || len(files) == 0 {
		t.Fatalf("%d ports files in the point dirs for %d points", len(files), len(r.Curve))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(string(b))
		if len(fields) != 2 {
			t.Fatalf("%s: %q", f, b)
		}
		p, err1 := strconv.Atoi(fields[0])
		p2, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil || p == p2 || p2 <= 0 {
			t.Fatalf("%s: {port} {port2} filled as %q", f, b)
		}
	}
}
