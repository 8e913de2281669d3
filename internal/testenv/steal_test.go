package testenv

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// Steal reads /proc/stat's cpu line: a share between 0 and 100 where
// the kernel has one, nothing made up where it has none.
func TestSteal(t *testing.T) {
	pct, ok := Steal(20 * time.Millisecond)
	if _, err := os.Stat("/proc/stat"); err != nil {
		if ok {
			t.Errorf("no /proc/stat, yet Steal said %.1f%%", pct)
		}
		return
	}
	if !ok || pct < 0 || pct > 100 {
		t.Errorf("Steal = %.1f%%, %v; want a share read off /proc/stat", pct, ok)
	}
	s, total, ok := stealTicks()
	if !ok || total == 0 || s > total {
		t.Errorf("stealTicks = %d of %d, %v", s, total, ok)
	}
}

// The load Steal reads under makes round trips between pinned threads
// where there are two CPUs or more, and stop ends every thread of it.
func TestWakeLoad(t *testing.T) {
	stop := wakeLoad()
	time.Sleep(50 * time.Millisecond)
	trips := stop()
	if runtime.GOOS == "linux" && runtime.NumCPU() >= 2 && trips == 0 {
		t.Errorf("no round trip in 50 ms on %d CPUs", runtime.NumCPU())
	}
}
