package procfs

import (
	"os"
	"runtime"
	"slices"
	"testing"
)

func TestWalkTree(t *testing.T) {
	kids := map[int][]int{1: {2, 3}, 2: {4}, 3: {4, 1}, 4: {5}}
	got := WalkTree(1, func(pid int) []int { return kids[pid] })
	if want := []int{2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("WalkTree = %v, want %v: breadth first, each once, root excluded", got, want)
	}
}

// This test's process is below its parent by the walk and by the scan;
// a pid that does not exist has no descendants and no error.
func TestDescendantsOfOurParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux /proc")
	}
	walk, err := Descendants(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	scan, err := DescendantsByScan(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(walk, os.Getpid()) || !slices.Contains(scan, os.Getpid()) || !slices.IsSorted(walk) || !slices.IsSorted(scan) {
		t.Errorf("walk %v, scan %v: want both sorted and holding %d", walk, scan, os.Getpid())
	}
	if gone, err := Descendants(1 << 30); err != nil || len(gone) != 0 {
		t.Errorf("Descendants(no such pid) = %v, %v; want none, no error", gone, err)
	}
}
