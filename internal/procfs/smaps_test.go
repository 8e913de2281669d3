package procfs

import (
	"os"
	"runtime"
	"testing"
)

// A smaps_rollup as Linux 6.18 writes it.
const rollupLines = "557f7b971000-7ffeba44c000 ---p 00000000 00:00 0                          [rollup]\n" +
	"Rss:                1628 kB\nPss:                 466 kB\nPss_Dirty:           112 kB\n" +
	"Pss_Anon:            112 kB\nPss_File:            354 kB\nPss_Shmem:             0 kB\n" +
	"Shared_Clean:       1432 kB\nPrivate_Dirty:       112 kB\nSwap:                  0 kB\n"

func TestParseSmapsRollup(t *testing.T) {
	r, err := ParseSmapsRollup([]byte(rollupLines))
	if err != nil {
		t.Fatal(err)
	}
	want := Rollup{RssKiB: 1628, PssKiB: 466, PssAnonKiB: 112, PssFileKiB: 354, HasPss: true}
	if r != want {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
	if r, err := ParseSmapsRollup([]byte("Rss:  10 kB\n")); err != nil || r.HasPss || r.RssKiB != 10 {
		t.Errorf("no Pss line: %+v, %v", r, err)
	}
	for _, bad := range []string{"Pss:  lots kB\n", "Rss: -1 kB\n"} {
		if _, err := ParseSmapsRollup([]byte(bad)); err == nil {
			t.Errorf("ParseSmapsRollup(%q) accepted", bad)
		}
	}
}

func TestReadSmapsRollupOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("kernel without smaps_rollup (before 4.14)")
	}
	r, err := ReadSmapsRollup(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// This process maps its own binary: resident, and shared at most
	// with other processes, so its Pss is above zero and not above Rss.
	if !r.HasPss || r.PssKiB == 0 || r.PssKiB > r.RssKiB {
		t.Errorf("self: %+v", r)
	}
}
