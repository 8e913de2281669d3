package publish_test

import (
	"fmt"
	"os"

	"github.com/ceiling-bench/ceiling/publish"
)

// Compare a pull request's sweep with the published baseline: batch 10 lost
// 20 % and batch 100 gained 25 %, both beyond the 4 % noise floor.
func ExampleCompare() {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			panic(err)
		}
		return b
	}
	base, err := publish.Read(read("base.json"), "base.json")
	if err != nil {
		panic(err)
	}
	head, err := publish.Read(read("head_mixed.json"), "head_mixed.json")
	if err != nil {
		panic(err)
	}
	c := publish.Compare(base, head, publish.CompareOptions{})
	fmt.Printf("noise floor %.1f %%\n", *c.FloorPct)
	for _, r := range c.Rows {
		fmt.Printf("batch %d: %+.1f %% %s\n", r.Batch, *r.DeltaPct, r.Verdict)
	}
	// Output:
	// noise floor 4.0 %
	// batch 10: -20.0 % slower
	// batch 100: +25.0 % faster
}
