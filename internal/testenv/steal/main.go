// Command steal prints the share of the CPUs' time (a whole percent) the
// hypervisor stole over -for, read under testenv.Steal's load: threads
// on neighbouring CPUs passing a byte back and forth, which sleep and
// wake as a sweep's do. .ci/lane waits on it before each package of a
// tagged lane.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

func main() {
	d := flag.Duration("for", 5*time.Second, "how long to read")
	flag.Parse()
	pct, ok := testenv.Steal(*d)
	if !ok {
		fmt.Fprintln(os.Stderr, "steal: /proc/stat has no cpu line to read")
		os.Exit(1)
	}
	fmt.Printf("%.0f\n", pct)
}
