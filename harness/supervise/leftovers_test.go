package supervise

import "testing"

// TestDescribeLeftovers: the warning says what was done to each thing
// an earlier run left: processes killed, cgroups removed. Only empty
// cgroups left is "removed", never "killed" (a run once warned that it
// had killed what was an empty directory).
func TestDescribeLeftovers(t *testing.T) {
	cg := Leftover{Kind: "cgroup", Path: "/sys/fs/cgroup/ceiling-12.34-srv", Owner: "12.34"}
	proc := Leftover{Kind: "process", Pid: 56, Command: "refserver", Owner: "12.34"}
	for _, tt := range []struct {
		left []Leftover
		want string
	}{
		{nil, ""},
		{[]Leftover{cg}, "an earlier run (harness 12.34) ended without cleaning up: removed the empty cgroup /sys/fs/cgroup/ceiling-12.34-srv"},
		{[]Leftover{proc, cg}, "an earlier run (harness 12.34) ended without cleaning up: killed process 56 (refserver); removed the cgroup /sys/fs/cgroup/ceiling-12.34-srv"},
	} {
		if got := DescribeLeftovers(tt.left); got != tt.want {
			t.Errorf("DescribeLeftovers(%v)\n = %q\nwant %q", tt.left, got, tt.want)
		}
	}
}
