package result

import (
	"strings"
	"testing"
)

// TestWriteProfileDiff: the top frames each way, the flame graph's path,
// names made inert for a terminal; or the reason there is none.
func TestWriteProfileDiff(t *testing.T) {
	d := &ProfileDiff{Tool: "perf",
		Base:           &ProfileArm{Points: []int{1, 4, 5}, CPUNsPerMessage: 10000},
		Head:           &ProfileArm{Points: []int{2, 3, 6}, CPUNsPerMessage: 12500},
		FlamegraphFile: "profile/flamegraph.svg",
		Frames: []ProfileFrame{
			{Function: "main.spin", HeadNs: 2100, Verdict: FrameGrew},
			{Function: "evil\x1b[31mred\u202e", BaseNs: 10, HeadNs: 500, Verdict: FrameGrew},
			{Function: "third", BaseNs: 100, HeadNs: 200, Verdict: FrameGrew},
			{Function: "quiet", BaseNs: 100, HeadNs: 101, Verdict: FrameWithinNoise},
		}}
	var b strings.Builder
	if err := WriteProfileDiff(&b, d, 2, "/out"); err != nil {
		t.Fatal(err)
	}
	want := "why (perf, CPU per message handled, 3 and 3 profiled points): base 10.00 µs, head 12.50 µs (+2.50 µs (+25.0%))\n" +
		"  grew   +2.10 µs (new)         main.spin (0 ns -> 2.10 µs)\n" +
		"  grew   +490 ns (+4900.0%)     evil?[31mred? (10 ns -> 500 ns)\n" +
		"  shrank none beyond the spread of its points\n" +
		"  flame graph: /out/profile/flamegraph.svg\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	_ = WriteProfileDiff(&b, &ProfileDiff{Reason: "perf is not installed"}, 3, "")
	if b.String() != "why: no CPU profile: perf is not installed\n" {
		t.Errorf("got %q", b.String())
	}
}
