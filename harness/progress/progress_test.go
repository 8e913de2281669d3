package progress

import (
	"bytes"
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
	Arm(&b, 5, 20, schedule.Point{Arm: result.ArmBase, Role: result.RoleCompare, Key: k}, "b", 61*time.Second)
	Arm(&b, 1, 20, schedule.Point{Arm: result.ArmHead, Role: result.RoleSweep, Key: k}, "", 0)
	const want = `plan: 12 points (10 on the ladder, 1 A-A repeat): 2m05s of load, plus each point's boot and stop
point 1/12: batch 10, 64 connections, rep 2 | elapsed 0s, eta ?
point 3/12: batch 10, 64 connections, rep 2 (A-A repeat) | elapsed 40s, eta 3m20s
point 12/12: batch 10, 64 connections, rep 2 (resilience: FAULT) | elapsed 10m00s, eta 55s
point 5/20: base, batch 10, 64 connections, rep 2 (compare, duet half b) | elapsed 1m01s, eta 4m04s
point 1/20: head, batch 10, 64 connections, rep 2 (first pass) | elapsed 0s, eta ?
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
