package pinning

import "github.com/ceiling-bench/ceiling/internal/cpuset"

// ErrUnsupported is returned (and wrapped) where this system cannot pin:
// anything but Linux.
var ErrUnsupported = cpuset.ErrUnsupported
