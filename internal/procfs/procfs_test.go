package procfs

import (
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A name with spaces and parentheses, then the real fields of a
	// kernel thread (flags 0x208040 has PF_KTHREAD) on CPU 3.
	line := "4242 (a (b) c) S 2 0 0 0 -1 2129984 0 0 0 0 17 5 0 0 20 0 1 0 4711 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	st, err := ParseStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Pid: 4242, Comm: "a (b) c", State: 'S', PPid: 2, PGrp: 0, Flags: 2129984, UTicks: 17, STicks: 5, StartTicks: 4711, Processor: 3}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	if !st.KernelThread() {
		t.Error("PF_KTHREAD not seen")
	}
	for _, bad := range []string{"1 (init S 0", "1 init) S", "1 (x) S 1 2", "1 (x) SS 1 1 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9"} {
		if _, err := ParseStat(1, []byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	s, err := ParseSchedstat([]byte("123456789 2000 17\n"))
	if err != nil || s != (Schedstat{RunNs: 123456789, DelayNs: 2000}) {
		t.Errorf("got %+v, %v", s, err)
	}
	if _, err := ParseSchedstat([]byte("12")); err == nil {
		t.Error("one field accepted")
	}
	if _, err := ParseSchedstat([]byte("x 1 1")); err == nil {
		t.Error("a word accepted")
	}
}

func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	pid := os.Getpid()
	st, err := ReadStat(pid)
	if err != nil || st.PPid != os.Getppid() || st.StartTicks == 0 || st.KernelThread() {
		t.Fatalf("ReadStat(self) = %+v, %v", st, err)
	}
	tids := Tasks(pid)
	if !slices.Contains(tids, pid) {
		t.Fatalf("Tasks(self) = %v lacks the main thread", tids)
	}
	ts, err := ReadTaskStat(pid, pid)
	if err != nil || ts.Comm != st.Comm {
		t.Errorf("ReadTaskStat = %+v, %v", ts, err)
	}
	if _, err := ReadSchedstat(pid, pid); err != nil {
		t.Logf("no schedstat here: %v", err)
	}
	pids, err := Pids()
	if err != nil || !slices.Contains(pids, pid) || !slices.Contains(pids, 1) {
		t.Errorf("Pids lacks self or 1: %v", err)
	}
	if up, err := UptimeSeconds(); err != nil || up <= 0 {
		t.Errorf("uptime %v, %v", up, err)
	}
	if Tasks(1<<30) != nil {
		t.Error("a missing pid has tasks")
	}
}

func TestParseHexAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:D431":                         "127.0.0.1:54321",
		"00000000000000000000000001000000:0050": "[::1]:80",
	} {
		got, ok := parseHexAddr(in)
		if !ok || got.String() != want {
			t.Errorf("parseHexAddr(%q) = %v, %v, want %s", in, got, ok, want)
		}
	}
	if _, ok := parseHexAddr("zz:1"); ok {
		t.Error("bad hex accepted")
	}
}

// TCPOwners finds this process behind a connection it made, by the
// connection's local address, and nothing behind an address nobody has.
func TestTCPOwners(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	local := c.LocalAddr().String()
	got := TCPOwners([]string{local, "127.0.0.1:1"})
	if got[local] != os.Getpid() || len(got) != 1 {
		t.Errorf("TCPOwners(%s) = %v, want this process (%d) only", local, got, os.Getpid())
	}
}
