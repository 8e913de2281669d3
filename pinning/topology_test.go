package pinning

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"

	"github.com/google/go-cmp/cmp"
)

// fakeSysfs writes an online list and thread_siblings_list files for the
// given physical cores (each a list of hardware threads).
func fakeSysfs(t *testing.T, online string, cores [][]int) {
	t.Helper()
	dir := t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "online"), online)
	for _, core := range cores {
		list := CPUSet(core).String()
		for _, c := range core {
			write(filepath.Join(dir, fmt.Sprintf("cpu%d", c), "topology", "thread_siblings_list"), list)
		}
	}
	old := sysCPU
	sysCPU = dir
	t.Cleanup(func() { sysCPU = old })
}

func TestSMTSiblings(t *testing.T) {
	if !Supported {
		t.Skip(ErrUnsupported)
	}
	// 4 physical cores with 2 threads each, Intel-style numbering: cpu N
	// and N+4 share a core.
	fakeSysfs(t, "0-7", [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}})
	tests := []struct {
		server, gen CPUSet
		want        [][2]int
	}{
		{CPUSet{1, 2, 3}, CPUSet{0}, [][2]int{}},
		{CPUSet{1, 2, 3}, CPUSet{4}, [][2]int{}},
		{CPUSet{0, 1, 2}, CPUSet{4}, [][2]int{{0, 4}}},
		{CPUSet{4, 5, 6}, CPUSet{0, 1}, [][2]int{{4, 0}, {5, 1}}},
		{CPUSet{0}, CPUSet{0}, [][2]int{}}, // overlap, not siblings
	}
	for _, tt := range tests {
		got, err := SMTSiblings(tt.server, tt.gen)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("SMTSiblings(%s, %s) (-want +got):\n%s", tt.server, tt.gen, diff)
		}
	}
	got, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CPUSet{0, 1, 2, 3, 4, 5, 6, 7}, got); diff != "" {
		t.Errorf("Online (-want +got):\n%s", diff)
	}
	_, err = SMTSiblings(CPUSet{9}, CPUSet{0})
	testenv.ErrContains(t, err, "smt siblings of cpu 9")
}

func TestSMTSiblingsThisMachine(t *testing.T) {
	if !Supported {
		t.Skip(ErrUnsupported)
	}
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the topology, a CPU is never its own sibling pair.
	pairs, err := SMTSiblings(online, online)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p[0] == p[1] {
			t.Errorf("pair %v names one cpu twice", p)
		}
	}
}

func TestDuetHalf(t *testing.T) {
	if !Supported {
		t.Skip(ErrUnsupported)
	}
	// 4 cores of 2 threads, cpu N and N+4 on one core.
	fakeSysfs(t, "0-7", [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}})
	tests := []struct {
		server, gen, available CPUSet
		wantSrv, wantGen       CPUSet
		err                    bool
	}{
		// One thread per side: the second half takes whole free cores,
		// never a sibling of the first half's CPUs.
		{CPUSet{1}, CPUSet{0}, CPUSet{0, 1, 2, 3, 4, 5, 6, 7}, CPUSet{2}, CPUSet{6}, false},
		{CPUSet{1, 5}, CPUSet{0, 4}, CPUSet{0, 1, 2, 3, 4, 5, 6, 7}, CPUSet{2, 6}, CPUSet{3, 7}, false},
		// Siblings of the first half are not free: 8 CPUs, 3 cores used.
		{CPUSet{1, 2}, CPUSet{0}, CPUSet{0, 1, 2, 3, 4, 5, 6, 7}, nil, nil, true},
		// Outside the process's affinity is not available.
		{CPUSet{1}, CPUSet{0}, CPUSet{0, 1, 2}, nil, nil, true},
	}
	for _, tt := range tests {
		srv, gen, err := DuetHalf(tt.server, tt.gen, tt.available)
		if (err != nil) != tt.err {
			t.Fatalf("DuetHalf(%s, %s, %s): err %v, want error %v", tt.server, tt.gen, tt.available, err, tt.err)
		}
		if diff := cmp.Diff(tt.wantSrv, srv); diff != "" {
			t.Errorf("DuetHalf(%s, %s) server (-want +got):\n%s", tt.server, tt.gen, diff)
		}
		if diff := cmp.Diff(tt.wantGen, gen); diff != "" {
			t.Errorf("DuetHalf(%s, %s) generator (-want +got):\n%s", tt.server, tt.gen, diff)
		}
	}
	// Without SMT (one thread per core), 4 CPUs split 2 + 2.
	fakeSysfs(t, "0-3", [][]int{{0}, {1}, {2}, {3}})
	srv, gen, err := DuetHalf(CPUSet{1}, CPUSet{0}, CPUSet{0, 1, 2, 3})
	if err != nil || srv.String() != "2" || gen.String() != "3" {
		t.Fatalf("no SMT: got %s / %s, %v; want 2 / 3", srv, gen, err)
	}
	_, _, err = DuetHalf(CPUSet{1}, CPUSet{0}, CPUSet{0, 1})
	if err == nil || !strings.Contains(err.Error(), "4 CPUs") {
		t.Fatalf("2 CPUs: got %v, want an error naming the 4 CPUs needed", err)
	}
}
