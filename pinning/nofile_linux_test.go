package pinning

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Within the hard limit anything is reachable; above fs.nr_open nothing
// is, and the reason names the bound.
func TestReachableNoFile(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if got, why := ReachableNoFile(lim.Max); got != lim.Max || why != "" {
		t.Errorf("ReachableNoFile(hard limit %d) = %d, %q", lim.Max, got, why)
	}
	n := nrOpen()
	if n == 0 {
		t.Skip("fs.nr_open unreadable")
	}
	got, why := ReachableNoFile(n + 1)
	if got != lim.Max || why == "" {
		t.Errorf("ReachableNoFile(fs.nr_open+1 = %d) = %d, %q; want the hard limit %d and a reason", n+1, got, why, lim.Max)
	}
	t.Logf("above fs.nr_open: %d (%s)", got, why)
}
