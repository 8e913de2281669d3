package pinning

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"golang.org/x/sys/unix"
)

// ReachableNoFile is the soft RLIMIT_NOFILE a child started with
// Spec.NoFile = want gets from this process, worked out before anything
// boots, the way setNoFile will grant it: want when it is within this
// process's hard limit, or when this process may raise the hard limit
// (CAP_SYS_RESOURCE, i.e. root) and want is within fs.nr_open; otherwise
// the hard limit. why says which bound held it back ("" when want is
// reachable).
func ReachableNoFile(want uint64) (got uint64, why string) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return want, "" // cannot tell; the child's readback (NoFile) will
	}
	if want <= lim.Max {
		return want, ""
	}
	if !capSysResource() {
		return lim.Max, fmt.Sprintf("the hard limit is %d and raising it needs CAP_SYS_RESOURCE, which this process lacks (as root in a container can)", lim.Max)
	}
	if nrOpen := nrOpen(); nrOpen > 0 && want > nrOpen {
		return lim.Max, fmt.Sprintf("the hard limit is %d and fs.nr_open, the most root may raise it to, is %d", lim.Max, nrOpen)
	}
	return want, ""
}

// RaiseNoFile raises this process's soft RLIMIT_NOFILE to want (and the
// hard limit when want is above it and we may), as the trampoline does
// for a child, and returns the soft limit now in force.
func RaiseNoFile(want uint64) (uint64, error) {
	if cur, err := SelfNoFile(); err == nil && cur >= want {
		return cur, nil
	}
	if err := setNoFile(want); err != nil {
		return 0, err
	}
	return SelfNoFile()
}

// capSysResource reports whether this process's effective capabilities
// hold CAP_SYS_RESOURCE, which setrlimit needs to raise a hard limit.
func capSysResource() bool {
	st, err := procfs.ReadStatus(os.Getpid())
	if err != nil || st.Has&procfs.HasCapEff == 0 {
		return os.Geteuid() == 0
	}
	return st.CapEff&(1<<unix.CAP_SYS_RESOURCE) != 0
}

// nrOpen is fs.nr_open, the ceiling of any RLIMIT_NOFILE; 0 if unknown.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}
