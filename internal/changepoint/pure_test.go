package changepoint

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// The detector is a function of its series: no I/O, no randomness, no
// clock in its files.
func TestDetectorIsPure(t *testing.T) { testenv.FilesArePure(t) }
