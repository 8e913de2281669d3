package procfs

import (
	"reflect"
	"runtime"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	in := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" +
		"30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n" +
		"35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n" +
		"36 25 0:31 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n" +
		"bad line without separator\n" +
		"40 25 0:32 / /x rw - short\n"
	got := ParseMountinfo([]byte(in))
	want := []Mount{
		{Point: "/", FSType: "ext4", Super: []string{"rw"}},
		{Point: "/sys/fs/cgroup", FSType: "cgroup2", Super: []string{"rw", "nsdelegate"}},
		{Point: "/sys/fs/cgroup/cpu,cpuacct", FSType: "cgroup", Super: []string{"rw", "cpu", "cpuacct"}},
		{Point: "/sys/fs/cgroup/freezer", FSType: "cgroup", Super: []string{"rw", "freezer"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseCgroups(t *testing.T) {
	in := "12:cpu,cpuacct:/user.slice\n11:freezer:/\n1:name=systemd:/a:b\n0::/user.slice/session-2.scope\n\n"
	got := ParseCgroups([]byte(in))
	want := []Cgroup{
		{ID: "12", Controllers: []string{"cpu", "cpuacct"}, Path: "/user.slice"},
		{ID: "11", Controllers: []string{"freezer"}, Path: "/"},
		{ID: "1", Controllers: []string{"name=systemd"}, Path: "/a:b"},
		{ID: "0", Path: "/user.slice/session-2.scope"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestReadMountsAndCgroupsOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	mounts, err := ReadMounts()
	if err != nil || len(mounts) == 0 {
		t.Fatalf("ReadMounts = %d mounts, %v", len(mounts), err)
	}
	cgs, err := ReadCgroups()
	if err != nil || len(cgs) == 0 {
		t.Fatalf("ReadCgroups = %v, %v", cgs, err)
	}
	v2 := false
	for _, cg := range cgs {
		v2 = v2 || cg.ID == "0" && cg.Controllers == nil
	}
	if own := OwnCgroupV2(); v2 && own == "" {
		t.Errorf("a v2 line in %+v but no own v2 cgroup", cgs)
	}
	if OwnCgroupV1("no-such-controller") != "" {
		t.Error("a v1 path for a controller nobody has")
	}
}
