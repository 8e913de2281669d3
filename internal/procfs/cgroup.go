package procfs

import (
	"bytes"
	"os"
	"strings"
)

// Mount is one line of /proc/self/mountinfo, the part the cgroup code
// uses.
type Mount struct {
	Point  string   // where it is mounted
	FSType string   // "cgroup", "cgroup2", ...
	Super  []string // the superblock options: a cgroup v1 mount's controllers are among them
}

// ReadMounts reads this process's /proc/self/mountinfo.
func ReadMounts() ([]Mount, error) { return readSelf("mountinfo", ParseMountinfo) }

// ParseMountinfo parses mountinfo lines: the mount point is the fifth
// field, and after the " - " separator come the file system type, the
// source and the superblock options. Lines without them are passed over.
func ParseMountinfo(b []byte) []Mount {
	var out []Mount
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		pre, post, ok := bytes.Cut(line, []byte(" - "))
		f, g := bytes.Fields(pre), bytes.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		out = append(out, Mount{Point: string(f[4]), FSType: string(g[0]), Super: strings.Split(string(g[2]), ",")})
	}
	return out
}

// Cgroup is one line of /proc/self/cgroup: a hierarchy, its controllers
// (none for the v2 hierarchy, "0::/path") and this process's path in it.
type Cgroup struct {
	ID          string
	Controllers []string
	Path        string
}

// ReadCgroups reads this process's /proc/self/cgroup.
func ReadCgroups() ([]Cgroup, error) { return readSelf("cgroup", ParseCgroups) }

// readSelf parses /proc/self/name.
func readSelf[T any](name string, parse func([]byte) []T) ([]T, error) {
	b, err := os.ReadFile(Root + "/self/" + name)
	if err != nil {
		return nil, err
	}
	return parse(b), nil
}

// ParseCgroups parses "id:controllers:path" lines; others are passed
// over. The path may hold colons.
func ParseCgroups(b []byte) []Cgroup {
	var out []Cgroup
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		parts := strings.SplitN(string(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		cg := Cgroup{ID: parts[0], Path: parts[2]}
		if parts[1] != "" {
			cg.Controllers = strings.Split(parts[1], ",")
		}
		out = append(out, cg)
	}
	return out
}

// OwnCgroupV1 is this process's path in the v1 hierarchy that has
// controller, "" if none.
func OwnCgroupV1(controller string) string {
	cgs, _ := ReadCgroups()
	for _, cg := range cgs {
		for _, c := range cg.Controllers {
			if c == controller {
				return cg.Path
			}
		}
	}
	return ""
}

// OwnCgroupV2 is this process's cgroup v2 path ("0::/path"), "" if none.
func OwnCgroupV2() string {
	cgs, _ := ReadCgroups()
	for _, cg := range cgs {
		if cg.ID == "0" && cg.Controllers == nil {
			return cg.Path
		}
	}
	return ""
}
