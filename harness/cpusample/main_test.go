package cpusample

import (
	"os"
	"testing"

	"github.com/ceiling-bench/ceiling/pinning"
)

func TestMain(m *testing.M) {
	pinning.Init() // children are started pinned through the trampoline
	os.Exit(m.Run())
}
