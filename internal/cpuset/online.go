package cpuset

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// OnlinePath is where the kernel lists the CPUs it has online.
const OnlinePath = "/sys/devices/system/cpu/online"

// ErrUnsupported is returned where this system publishes no CPU list:
// anything but Linux.
var ErrUnsupported = errors.New("cpu pinning is unsupported on this system (Linux only)")

// supported: the system lists its CPUs (Linux).
const supported = runtime.GOOS == "linux"

// Online returns the CPUs the kernel has online (OnlinePath); where
// there is no such list, ErrUnsupported.
func Online() (Set, error) {
	if !supported {
		return nil, ErrUnsupported
	}
	return ReadList(OnlinePath)
}

// ReadList reads a sysfs CPU list file ("0-1\n").
func ReadList(path string) (Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cpu list: %w", err)
	}
	set, err := parseList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}
