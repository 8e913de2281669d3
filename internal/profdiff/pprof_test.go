package profdiff

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

//go:noinline
func burnForPprofTest(n int) int {
	x := 0
	for i := range n {
		x += i * i % 7
	}
	return x
}

// cpuTime is this process's CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestParsePprofOfGo: Go's own CPU profile of a loop (run until it has
// used 300 ms of CPU, however busy the machine) reads back with the
// loop's function as a leaf, every sample's nanoseconds, and no sample
// without a symbol.
func TestParsePprofOfGo(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile is already running: %v", err)
	}
	start := cpuTime(t)
	sink := 0
	for cpuTime(t)-start < 300*time.Millisecond {
		sink += burnForPprofTest(1 << 16)
	}
	pprof.StopCPUProfile()
	_ = sink
	p, err := ParsePprof(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples < 10 || p.Ns < int64(p.Samples)*int64(time.Millisecond) {
		t.Fatalf("%d samples, %d ns", p.Samples, p.Ns)
	}
	leaf := 0
	for k, w := range p.Stacks {
		if strings.HasSuffix(k, ".burnForPprofTest") {
			leaf += int(w.Samples)
		}
	}
	if leaf < int(p.Samples)/2 {
		t.Errorf("the loop is the leaf of %d of %d samples", leaf, p.Samples)
	}
	if _, err := ParsePprof([]byte("not a profile")); err == nil {
		t.Error("took text for a profile")
	}
}

// FuzzParsePprof: any input is refused or read, never a panic, and what
// is read holds its sums.
func FuzzParsePprof(f *testing.F) {
	f.Add([]byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's'})
	f.Add([]byte{0x1f, 0x8b, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePprof(b)
		if err != nil {
			return
		}
		var n int64
		for _, w := range p.Stacks {
			n += w.Samples
		}
		if n != p.Samples || p.Unsymbolised > p.Samples {
			t.Fatalf("samples %d vs %d, unsymbolised %d", n, p.Samples, p.Unsymbolised)
		}
	})
}
