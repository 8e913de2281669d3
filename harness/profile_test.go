package harness

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

func TestProfilePathAndSeconds(t *testing.T) {
	if got, want := scrape.ProfilePath("prof", 7, result.PointKey{Batch: 100, Connections: 256, Rep: 2}), filepath.Join("prof", "point-7-b100-c256-r2.pprof"); got != want {
		t.Errorf("ProfilePath = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]int{0: 1, 300 * time.Millisecond: 1, time.Second: 1, 2500 * time.Millisecond: 2, 10 * time.Second: 10} {
		if got := target.ExpandProfile("{seconds}", target.Addr{}, d); got != strconv.Itoa(want) {
			t.Errorf("{seconds} of %s = %s, want %d", d, got, want)
		}
	}
	if got := target.ExpandProfile("http://{addr}/debug/pprof/profile?seconds={seconds}", target.Addr{Port: 8080}, 3*time.Second); got != "http://127.0.0.1:8080/debug/pprof/profile?seconds=3" {
		t.Errorf("expandProfile = %q", got)
	}
}

// TestProfileNeedsTheTargetsURL: a target without "profile" is refused
// with --profile.
func TestProfileNeedsTheTargetsURL(t *testing.T) {
	o := knob.DefaultOptions(false)
	o.ProfileDir = "out/prof"
	err := checkTargetFor(target.Spec{}, &o)
	if err == nil || !strings.Contains(err.Error(), `the target has no "profile" url`) {
		t.Errorf("CheckFor with --profile and no profile url: %v", err)
	}
	if err := checkTargetFor(target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p"}}, &o); err != nil {
		t.Errorf("CheckFor: %v", err)
	}
}
