//go:build linux

package supervise

import (
	"os"
	"testing"
)

// Tree discovery is paid twice per sampling tick during a point, on
// whatever CPU the harness runs; compare the walk with the full scan:
//
//	go test -run X -bench Descendants ./harness/supervise/
func BenchmarkDescendantsWalk(b *testing.B) {
	for b.Loop() {
		if _, err := Descendants(os.Getppid()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDescendantsScan(b *testing.B) {
	for b.Loop() {
		if _, err := descendantsByScan(os.Getppid()); err != nil {
			b.Fatal(err)
		}
	}
}
