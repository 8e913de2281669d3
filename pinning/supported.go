package pinning

import "errors"

// ErrUnsupported is returned (and wrapped) where this system cannot pin:
// anything but Linux.
var ErrUnsupported = errors.New("cpu pinning is unsupported on this system (Linux only)")
