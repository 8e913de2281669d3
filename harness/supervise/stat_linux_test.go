package supervise

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	line := "4242 (we ird) (x)) S 17 4242 17 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	got, err := parseStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := ProcStat{Pid: 4242, Comm: "we ird) (x)", PPid: 17, PGrp: 4242, State: 'S', Flags: 4194560, UTicks: 5, STicks: 3, StartTicks: 987654, Processor: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseStat(1, []byte("1 (init S 0")); err == nil {
		t.Error("malformed stat accepted")
	}
}

func TestReadStatSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPid != os.Getppid() || st.StartTicks == 0 {
		t.Errorf("ReadStat(self) = %+v, want ppid %d and a start time", st, os.Getppid())
	}
}
