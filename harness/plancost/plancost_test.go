package plancost

import (
	"math"
	"testing"
	"time"
)

// MulDur and AddDur saturate at math.MaxInt64 instead of wrapping.
func TestSaturatingDurations(t *testing.T) {
	const max = time.Duration(math.MaxInt64)
	for _, c := range []struct{ got, want time.Duration }{
		{MulDur(3, time.Second), 3 * time.Second},
		{MulDur(0, max), 0},
		{MulDur(2, max/2), max - 1},
		{MulDur(2, max/2+1), max},
		{MulDur(math.MaxInt, time.Hour), max},
		{AddDur(max-1, 1), max},
		{AddDur(max, 1), max},
		{AddDur(max/2, max/2+2), max},
	} {
		if c.got != c.want {
			t.Errorf("got %d, want %d", c.got, c.want)
		}
	}
}
