package load

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

func TestSelfMemoryIsOneMeasure(t *testing.T) {
	p := func(pss, rss uint64) procfs.Memory { return procfs.Memory{PSSBytes: pss, RSSBytes: rss, HasPSS: true} }
	if got := selfMemory(p(10, 20), p(30, 40), p(50, 60)); got == nil || *got != (SelfMemory{Measure: "pss", BeforeConnectBytes: 10, WindowStartBytes: 30, WindowEndBytes: 50}) {
		t.Errorf("all PSS: %+v", got)
	}
	// One reading without PSS: all three in RSS, never a mix.
	if got := selfMemory(p(10, 20), procfs.Memory{RSSBytes: 40}, p(50, 60)); got == nil || *got != (SelfMemory{Measure: "rss", BeforeConnectBytes: 20, WindowStartBytes: 40, WindowEndBytes: 60}) {
		t.Errorf("mixed: %+v", got)
	}
	if got := selfMemory(procfs.Memory{}, p(30, 40), p(50, 60)); got != nil {
		t.Errorf("no baseline read: %+v, want none", got)
	}
}
