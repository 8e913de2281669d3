package cpusample

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkSample is the cost of one sample of a small tree (this test
// process's parent, go test, and its children): paid 4 times a second per
// side during a point, by the harness.
func BenchmarkSample(b *testing.B) {
	s := Start(context.Background(), time.Hour, Tree(os.Getppid()))
	defer s.Stop()
	for b.Loop() {
		s.sample()
	}
}
