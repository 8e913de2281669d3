package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Sysctl reads a kernel setting by its dotted name (net.core.somaxconn
// is /proc/sys/net/core/somaxconn), as the kernel writes it, trimmed. An
// error is a setting this kernel does not have (a module not loaded) or
// may not show.
func Sysctl(name string) (string, error) {
	b, err := os.ReadFile(Root + "/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// SysctlInts reads a setting of whitespace-separated integers
// (net.ipv4.ip_local_port_range: "32768	60999").
func SysctlInts(name string) ([]uint64, error) {
	s, err := Sysctl(name)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range strings.Fields(s) {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a list of integers", name, s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty", name)
	}
	return out, nil
}

// MemAvailable is /proc/meminfo's MemAvailable in bytes: the kernel's
// estimate of the memory that can be given to new work without swapping.
func MemAvailable() (uint64, error) {
	b, err := os.ReadFile(Root + "/meminfo")
	if err != nil {
		return 0, err
	}
	return ParseMemAvailable(b)
}

// ParseMemAvailable reads the MemAvailable line of a meminfo file.
func ParseMemAvailable(b []byte) (uint64, error) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		v, ok := bytes.CutPrefix(line, []byte("MemAvailable:"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo: malformed %q", line)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("meminfo: no MemAvailable line (a kernel before 3.14)")
}
