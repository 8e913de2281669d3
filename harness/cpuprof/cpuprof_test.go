package cpuprof

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/profdiff"
	"github.com/ceiling-bench/ceiling/result"
)

func scripted(perf bool, euid, paranoid int, paranoidErr error) Env {
	return Env{
		LookPath: func(string) (string, error) {
			if !perf {
				return "", errors.New(`exec: "perf": executable file not found in $PATH`)
			}
			return "/usr/bin/perf", nil
		},
		Euid:     func() int { return euid },
		Paranoid: func() (int, error) { return paranoid, paranoidErr },
	}
}

// TestCheck: perf missing, or not permitted to a user other than root
// (paranoid 3 and up), is a reason; at 2 such a user samples user space
// only; root is always permitted; an unreadable setting leaves it to
// perf.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name                string
		env                 Env
		event, reason, note string
	}{
		{"missing", scripted(false, 0, 2, nil), "", "perf is not installed", ""},
		{"root at 4", scripted(true, 0, 4, nil), "cpu-clock", "", ""}, // and system-wide (TestCheckSystemWide)
		{"user at 3", scripted(true, 1000, 3, nil), "", "kernel.perf_event_paranoid is 3", ""},
		{"user at 2", scripted(true, 1000, 2, nil), "cpu-clock:u", "", "user space only"},
		{"user at 1", scripted(true, 1000, 1, nil), "cpu-clock", "", ""},
		{"unreadable", scripted(true, 1000, 0, errors.New("no /proc")), "cpu-clock", "", ""},
	} {
		p := Check(c.env)
		if p.Event != c.event || !strings.Contains(p.Reason, c.reason) || (c.reason == "") != (p.Reason == "") || !strings.Contains(p.Note, c.note) {
			t.Errorf("%s: %+v", c.name, p)
		}
	}
}

// TestCheckSystemWide: perf samples the servers' CPUs whole only where
// it may (root, or paranoid 0 and below), else it attaches to their
// processes.
func TestCheckSystemWide(t *testing.T) {
	for _, c := range []struct {
		euid, paranoid int
		want           bool
	}{{0, 2, true}, {1000, 0, true}, {1000, -1, true}, {1000, 1, false}, {1000, 2, false}} {
		if got := Check(scripted(true, c.euid, c.paranoid, nil)).SystemWide; got != c.want {
			t.Errorf("euid %d, paranoid %d: system-wide %v", c.euid, c.paranoid, got)
		}
	}
	args := strings.Join(PerfArgs("cpu-clock", []string{"-a", "-C", "1"}, "c", "a", "d"), " ")
	if args != "record -e cpu-clock -g -a -C 1 -D -1 -F 999 -m 4M --control fifo:c,a -o d --no-buildid" {
		t.Errorf("perf %s", args)
	}
}

// TestRecordingWithoutPerf: a recording perf cannot make ends at once
// with the reason and no file, whatever the point's window does.
func TestRecordingWithoutPerf(t *testing.T) {
	pr := New(scripted(true, 1000, 3, nil))
	r := pr.Start(context.Background(), Spec{Dir: t.TempDir(), Pids: func() []int { return []int{os.Getpid()} }})
	r.WindowEnded()
	got := r.Finish()
	if got == nil || got.File != "" || got.Tool != result.ProfilerPerf || !strings.Contains(got.Reason, "not permitted") {
		t.Errorf("%+v", got)
	}
	var none *Recording
	none.WindowEnded()
	if none.Finish() != nil {
		t.Error("no recording recorded something")
	}
}

// perfText renders folded stacks as `perf script` prints them (one
// sample per line of output, leaf first), so that Diff reads recorded
// blocks through its Script seam.
func perfText(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "internal", "profdiff", "testdata", "blocks", name+".folded.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profdiff.ParseFolded(zr)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for stack, w := range p.Stacks {
		frames := strings.Split(stack, ";")
		for range w.Samples {
			b.WriteString("srv 1/1 1.000000: 250000 cpu-clock:\n")
			for i := len(frames) - 1; i >= 0; i-- {
				fmt.Fprintf(&b, "\t%x %s+0x1 (/srv)\n", i+1, frames[i])
			}
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

// messages of the recorded blocks (testdata/blocks/blocks.json).
var messages = map[string]float64{"a1": 41470, "a2": 65960, "b1": 87440, "s1": 74440, "s2": 70340, "s3": 65915}

// TestDiffOfRecordedBlocks: three profiled points an arm, recorded from
// refserver and refserver --spin 2us: spin leads the frames that grew,
// the arms' files are written and recorded relative to the result's
// directory, and the figures are per message.
func TestDiffOfRecordedBlocks(t *testing.T) {
	env := scripted(true, 0, 2, nil)
	env.Script = func(_ context.Context, perf, data string, pids []int) ([]byte, error) {
		if perf != "/usr/bin/perf" || len(pids) != 1 || pids[0] != 42 {
			return nil, fmt.Errorf("perf %q", perf)
		}
		return perfText(t, filepath.Base(filepath.Dir(data))), nil
	}
	var pts []result.Point
	for i, n := range []string{"a1", "s1", "s2", "a2", "b1", "s3"} {
		arm := result.ArmBase
		if n[0] == 's' {
			arm = result.ArmHead
		}
		pts = append(pts, result.Point{Index: i + 1, Arm: arm, Status: result.StatusOK,
			CPUProfile: &result.CPUProfile{Tool: result.ProfilerPerf, File: "/work/" + n + "/perf.data", Pids: []int{42}, DurationNs: 1e9, Messages: messages[n]}})
	}
	pts = append(pts, result.Point{Index: 7, Arm: result.ArmHead, Status: result.StatusOK, CPUProfile: &result.CPUProfile{Tool: result.ProfilerPerf, Reason: "perf exited"}})
	out := t.TempDir()
	d := New(env).Diff(context.Background(), DiffInput{Points: pts, Dir: filepath.Join(out, "profile"), RelTo: out})
	if d.Reason != "" {
		t.Fatalf("no diff: %s", d.Reason)
	}
	if len(d.Frames) == 0 || d.Frames[0].Function != "github.com/ceiling-bench/ceiling/refserver.spin" || d.Frames[0].Verdict != result.FrameGrew {
		t.Fatalf("first frame %+v", d.Frames)
	}
	if d.Base.Points[0] != 1 || len(d.Head.Points) != 3 || d.Base.Samples == 0 || d.Tool != result.ProfilerPerf || d.Tested == 0 {
		t.Errorf("arms %+v %+v", d.Base, d.Head)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "point 7 (head): no profile: perf exited") {
		t.Errorf("notes %q", d.Notes)
	}
	for _, f := range []string{d.FlamegraphFile, d.Base.FoldedFile, d.Head.FoldedFile} {
		if filepath.IsAbs(f) || !strings.HasPrefix(f, "profile"+string(filepath.Separator)) {
			t.Errorf("%q is not relative to the result's directory", f)
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, d.FlamegraphFile))
	if !strings.Contains(string(svg), "refserver.spin") {
		t.Error("the flame graph has no spin")
	}
}

// TestDiffReasons: no profile in an arm, or arms profiled by different
// tools, is a diff with a reason and nothing else.
func TestDiffReasons(t *testing.T) {
	pt := func(i int, arm string, cp *result.CPUProfile) result.Point {
		return result.Point{Index: i, Arm: arm, Status: result.StatusOK, CPUProfile: cp}
	}
	env := scripted(false, 0, 2, nil)
	env.Script = func(context.Context, string, string, []int) ([]byte, error) { return perfText(t, "a1"), nil }
	dir := t.TempDir()
	pprof := filepath.Join(dir, "cpu.pprof")
	if err := os.WriteFile(pprof, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		pts  []result.Point
		want string
	}{
		"none": {nil, "no profile of the base arm"},
		"head refused": {[]result.Point{
			pt(1, result.ArmBase, &result.CPUProfile{Tool: "perf", File: "x", Pids: []int{1}, DurationNs: 1, Messages: 10}),
			pt(2, result.ArmHead, &result.CPUProfile{Tool: "perf", Reason: "perf is not installed"}),
		}, "no profile of the head arm: point 2 (head): no profile: perf is not installed"},
		"unreadable pprof": {[]result.Point{
			pt(1, result.ArmBase, &result.CPUProfile{Tool: "perf", File: "x", Pids: []int{1}, DurationNs: 1, Messages: 10}),
			pt(2, result.ArmHead, &result.CPUProfile{Tool: "pprof", File: pprof, DurationNs: 1, Messages: 10}),
		}, "no profile of the head arm: point 2 (head): pprof"},
	} {
		d := New(env).Diff(context.Background(), DiffInput{Points: c.pts, Dir: t.TempDir()})
		if !strings.HasPrefix(d.Reason, c.want) || d.Frames != nil || d.FlamegraphFile != "" {
			t.Errorf("%s: %q, want %q (%d frames)", name, d.Reason, c.want, len(d.Frames))
		}
	}
}
