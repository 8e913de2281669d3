package publish_test

import (
	"fmt"
	"os"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

func readDoc(name string) *result.Result {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		panic(err)
	}
	r, err := publish.Read(b, name)
	if err != nil {
		panic(err)
	}
	return r
}

// A two-arm sweep (ceiling sweep --base-target) carries its own
// comparison: both arms measured in one job, repeated and interleaved.
// Compare re-derives it from the samples; here the headline batch lost
// about 12 % and only it gates --fail-on slower.
func ExampleCompare() {
	c, err := publish.Compare(nil, readDoc("two_arm_slower.json"), publish.CompareOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Mode)
	for _, r := range c.Rows {
		fmt.Printf("batch %d at %d connections: %+.1f %%, p = %.3f, %d pairs: %s, p99 %s\n",
			r.Batch, r.Connections, *r.DeltaPct, *r.PValue, r.NPairs, r.Verdict, r.P99Verdict)
	}
	fmt.Println(publish.FailOn(c, publish.FailOnSlower) != nil)
	// Output:
	// two-arm
	// batch 10 at 64 connections: -12.4 %, p = 0.008, 8 pairs: slower, p99 worse
	// batch 100 at 16 connections: +0.4 %, p = 0.195, 8 pairs: within_noise, p99 within_noise
	// true
}

// Without a two-arm document the baseline is a result published by another
// run: the fallback. A change beyond the A-A noise floor is not called
// slower, since runner variance is not in that floor.
func ExampleCompare_crossRun() {
	c, err := publish.Compare(readDoc("base.json"), readDoc("head_mixed.json"), publish.CompareOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s, noise floor %.1f %%\n", c.Mode, *c.FloorPct)
	for _, r := range c.Rows {
		fmt.Printf("batch %d: %+.1f %% %s\n", r.Batch, *r.DeltaPct, r.Verdict)
	}
	// Output:
	// cross-run, noise floor 4.0 %
	// batch 10: -20.0 % cannot_conclude
	// batch 100: +25.0 % cannot_conclude
}
