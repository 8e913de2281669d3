package profdiff

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestProfdiffIsPure: text in, figures and SVG out. It links nothing of
// the harness, and its files do no I/O, start no process and read no
// clock: the harness records and runs perf, the site and the harness
// both draw with it.
func TestProfdiffIsPure(t *testing.T) {
	const mod = "github.com/ceiling-bench/ceiling/"
	testenv.ImportsNone(t, mod+"internal/profdiff", mod+"harness", mod+"publish", mod+"load", mod+"pinning")
	testenv.FilesArePure(t)
}
