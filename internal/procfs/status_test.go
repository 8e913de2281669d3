package procfs

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// A status file as Linux 6.x writes it, cut to the lines around the ones
// kept.
const statusLines = "Name:\tmy prog\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\n" +
	"VmPeak:\t  123456 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1536 kB\nRssAnon:\t     512 kB\n" +
	"Threads:\t7\nSigQ:\t0/63569\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n" +
	"Cpus_allowed_list:\t0-3\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545"

func TestParseStatus(t *testing.T) {
	st, err := ParseStatus([]byte(statusLines))
	if err != nil {
		t.Fatal(err)
	}
	want := Status{
		VmRSSKiB: 1536, VmHWMKiB: 2048, Threads: 7,
		VoluntaryCtxtSwitches: 150, NonvoluntaryCtxtSwitches: 545,
		CapEff: 0x1ffffffffff,
		Has:    HasVmRSS | HasVmHWM | HasThreads | HasVoluntaryCtxtSwitches | HasNonvoluntaryCtxtSwitches | HasCapEff,
	}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	// A kernel thread has no Vm* lines: absent, not an error.
	kt, err := ParseStatus([]byte("Name:\tkworker/0:1\nThreads:\t1\nCapEff:\t0000000000000000\n"))
	if err != nil || kt.Has&(HasVmRSS|HasVmHWM) != 0 || kt.Has&HasCapEff == 0 || kt.CapEff != 0 || kt.Threads != 1 {
		t.Errorf("kernel thread: %+v, %v", kt, err)
	}
	for _, bad := range []string{"VmRSS:\tlots kB\n", "CapEff:\tzz\n", "Threads:\t-1\n"} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q) accepted", bad)
		}
	}
	b := []byte(statusLines)
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseStatus(b) }); n != 0 {
		t.Errorf("ParseStatus allocates %v times", n)
	}
}

func TestParseCPUModel(t *testing.T) {
	in := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.00GHz\nstepping\t: 3\n\nprocessor\t: 1\nmodel name\t: other\n"
	if m, ok := ParseCPUModel([]byte(in)); !ok || m != "Intel(R) Xeon(R) CPU @ 2.00GHz" {
		t.Errorf("got %q, %v", m, ok)
	}
	if m, ok := ParseCPUModel([]byte("processor\t: 0\nCPU implementer\t: 0x41\n")); ok || m != "" {
		t.Errorf("an ARM cpuinfo named %q", m)
	}
}

func TestReadStatusAndChildrenOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	st, err := ReadStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Has&HasVmRSS == 0 || st.VmRSSKiB == 0 || st.VmHWMKiB < st.VmRSSKiB || st.Threads < 1 || st.Has&HasCapEff == 0 {
		t.Errorf("ReadStatus(self) = %+v", st)
	}
	if _, err := ReadStatus(1 << 30); err == nil {
		t.Error("a missing pid has a status")
	}
	if _, err := os.Stat(Root + "/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		t.Skipf("no task/TID/children here: %v", err)
	}
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var kids []int
	for _, tid := range Tasks(os.Getpid()) {
		kids = append(kids, ThreadChildren(os.Getpid(), tid)...)
	}
	if !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("the children of this process's threads %v lack %d (a kernel without task/TID/children?)", kids, cmd.Process.Pid)
	}
	if ThreadChildren(1<<30, 1<<30) != nil {
		t.Error("a missing thread has children")
	}
}
