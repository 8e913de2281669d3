package testenv

import (
	"os"
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
