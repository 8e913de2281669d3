package procfs

import (
	"bytes"
	"os"
)

// CPUModel is the first "model name" of /proc/cpuinfo, trimmed; false
// where there is none (no /proc, or a CPU, as on most ARM kernels, that
// names itself otherwise).
func CPUModel() (string, bool) {
	b, err := os.ReadFile(Root + "/cpuinfo")
	if err != nil {
		return "", false
	}
	return ParseCPUModel(b)
}

// ParseCPUModel finds the first "model name" line of a cpuinfo file.
func ParseCPUModel(b []byte) (string, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "model name" {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}
