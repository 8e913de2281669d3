package procfs

import (
	"runtime"
	"testing"
)

func TestParseMemAvailable(t *testing.T) {
	in := "MemTotal:       24683784 kB\nMemFree:        19931172 kB\nMemAvailable:   23901056 kB\nBuffers:           43468 kB\n"
	if n, err := ParseMemAvailable([]byte(in)); err != nil || n != 23901056<<10 {
		t.Errorf("got %d, %v", n, err)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemAvailable: lots kB\n"} {
		if _, err := ParseMemAvailable([]byte(bad)); err == nil {
			t.Errorf("ParseMemAvailable(%q) accepted", bad)
		}
	}
}

func TestSysctlOfThisKernel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/sys")
	}
	r, err := SysctlInts("net.ipv4.ip_local_port_range")
	if err != nil || len(r) != 2 || r[0] > r[1] {
		t.Errorf("ip_local_port_range: %v, %v", r, err)
	}
	if _, err := Sysctl("net.no.such.setting"); err == nil {
		t.Error("a setting that does not exist was read")
	}
	if n, err := MemAvailable(); err != nil || n == 0 {
		t.Errorf("MemAvailable: %d, %v", n, err)
	}
}
