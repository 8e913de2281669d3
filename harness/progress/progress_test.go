package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/result"
)

// TestLines: the lines as a person watching a run reads them; the
// estimate is the mean point so far times the points left.
func TestLines(t *testing.T) {
	var b bytes.Buffer
	k := result.PointKey{Batch: 10, Connections: 64, Rep: 2}
	Plan(&b, 12, "10 on the ladder, 1 A-A repeat", 125*time.Second)
	Point(&b, 1, 12, result.RoleSweep, k, 0)
	Point(&b, 3, 12, result.RoleAARepeat, k, 40*time.Second)
	Point(&b, 12, 12, result.RoleResilience, k, 10*time.Minute)
	TwoArmPoint(&b, 41, schedule.Point{Arm: result.ArmBase, Role: result.RoleCompare, Key: k}, "b",
		schedule.Progress{FirstRun: 14, FirstMost: 18, BlocksRun: 2, BlocksClean: 1, BlocksPlanned: 39, Left: 3*time.Minute + 4*time.Second, LeftKnown: true}, 61*time.Second)
	TwoArmPoint(&b, 1, schedule.Point{Arm: result.ArmHead, Role: result.RoleSweep, Key: k}, "", schedule.Progress{FirstMost: 18}, 0)
	// A profiled block comes after the first pass and the blocks: it
	// was once labelled "first pass 5 of at most 4".
	TwoArmPoint(&b, 30, schedule.Point{Arm: result.ArmHead, Role: result.RoleProfile, Key: k}, "",
		schedule.Progress{FirstRun: 4, FirstMost: 4, BlocksRun: 12, BlocksClean: 12, BlocksPlanned: 36, ProfileBlocks: 3, Left: 72 * time.Second, LeftKnown: true}, 45*time.Second)
	TwoArmArms(&b, schedule.Step{Kind: schedule.BootArms, Arms: []string{result.ArmBase, result.ArmHead}, Why: "fresh servers for the blocks"},
		schedule.Progress{Left: 2 * time.Minute, LeftKnown: true}, 90*time.Second)
	const want = `plan: 12 points (10 on the ladder, 1 A-A repeat): 2m05s of load, plus each point's boot and stop
point 1/12: batch 10, 64 connections, rep 2 | elapsed 0s, eta ?
point 3/12: batch 10, 64 connections, rep 2 (A-A repeat) | elapsed 40s, eta 3m20s
point 12/12: batch 10, 64 connections, rep 2 (resilience: FAULT) | elapsed 10m00s, eta 55s
point 41, block 3 (clean 1 of 39 planned), duet half b: base, batch 10, 64 connections | elapsed 1m01s, left 3m04s
point 1, first pass 1 of at most 18: head, batch 10, 64 connections | elapsed 0s, left ?
point 30, profiled block 3 of 3: head, batch 10, 64 connections | elapsed 45s, left 1m12s
arms: booting base and head: fresh servers for the blocks | elapsed 1m30s, left 2m00s
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestLinesWithin100Columns: a plan of many parts wraps, and a failed
// point's line carries the start of its reason within 100 columns,
// pointing to where it is said in full (a refusal's 480 characters were
// once printed on its progress line and again three times after it).
func TestLinesWithin100Columns(t *testing.T) {
	var b bytes.Buffer
	Plan(&b, 42, "a first pass of 6 at most, both arms (batch 10's rungs searched, every other batch once at the rung found); then up to 18 blocks at that rung, within COMPARE_BUDGET 2m0s", 90*time.Second)
	reason := "the generator's preflight was refused, as it would be at every point: " + strings.Repeat("4009 invalid signature for app 1 ", 14)
	Failed(&b, 3, 12, "", reason)
	Failed(&b, 4, 42, result.ArmBase, "server exited")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, l := range lines {
		if n := len([]rune(l)); n > result.TableWidth {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-2], "point 3/12 failed: the generator's preflight was refused") || !strings.HasSuffix(lines[len(lines)-2], "… (in full under the table)") {
		t.Errorf("the refusal's line: %q", lines[len(lines)-2])
	}
	if lines[len(lines)-1] != "point 4/42 (base) failed: server exited" {
		t.Errorf("a short reason is kept whole: %q", lines[len(lines)-1])
	}
}
