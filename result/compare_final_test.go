package result

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// A budgeted run that ended at 7 clean blocks of 13 planned (the budget
// spent, blocks lost) tests its last look with the alpha the earlier
// looks left: 7 blocks all one way (p = 0.0156) are a verdict, where the
// interim level of look 7 (0 under O'Brien-Fleming) could never be. A
// run that reached its plan, or a fixed design, keeps its level.
func TestFinalLevel(t *testing.T) {
	allSlower := []float64{-0.2, -0.21, -0.22, -0.23, -0.24, -0.25, -0.26}
	p := stats.SignedRank(allSlower)
	if SequentialLevel(StopOBF, 7, 13, 0.05) > p {
		t.Fatalf("look 7 of 13's interim level %v already passes p %v", SequentialLevel(StopOBF, 7, 13, 0.05), p)
	}
	for _, stop := range []string{StopOBF, StopPocock} {
		if l := FinalLevel(stop, 7, 13, 0.05); !(p < l && l <= 0.05) {
			t.Errorf("%s: final level at 7 of 13 is %v; want above p = %v, at most alpha", stop, l, p)
		}
		if FinalLevel(stop, 13, 13, 0.05) != SequentialLevel(stop, 13, 13, 0.05) {
			t.Errorf("%s: the planned last look's level changed", stop)
		}
		if FinalLevel(stop, 5, 13, 0.05) != 0 {
			t.Errorf("%s: 5 blocks got a level", stop)
		}
	}
	if FinalLevel(StopFixed, 7, 13, 0.05) != 0.05 {
		t.Error("a fixed design's level is not alpha")
	}
}
