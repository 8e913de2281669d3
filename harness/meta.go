package harness

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// collectMeta records where the sweep ran, taken once before the first
// point (the result file is written outside the tree, so the ref cannot be
// dirtied by the run itself).
func collectMeta(command []string, version string) load.Meta {
	m := load.Meta{
		Command:   command,
		GitRef:    gitRef(),
		Version:   version,
		StartedAt: time.Now().UTC(),
		Hardware: load.Hardware{
			CPUModel:    cpuModel(),
			LogicalCPUs: runtime.NumCPU(),
			OS:          runtime.GOOS,
			Arch:        runtime.GOARCH,
			GoVersion:   runtime.Version(),
			GOMAXPROCS:  runtime.GOMAXPROCS(0),
		},
	}
	platformHardware(&m.Hardware)
	if set, err := pinning.Granted(os.Getpid()); err == nil {
		m.Hardware.CPUAffinity = set.Ints()
	}
	return m
}

// gitRef is HEAD with -dirty when tracked files changed, "unknown" outside
// a checkout. Untracked files do not count: they are not part of what a
// checkout of the ref reproduces, and git describe --dirty agrees.
func gitRef() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	ref := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		ref += "-dirty"
	}
	return ref
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// runnerFromEnv reads GitHub Actions' variables; CI is also true under any
// CI=true.
func runnerFromEnv(getenv func(string) string) Runner {
	return Runner{
		CI:       getenv("GITHUB_ACTIONS") == "true" || getenv("CI") == "true",
		Name:     getenv("RUNNER_NAME"),
		OS:       getenv("RUNNER_OS"),
		Arch:     getenv("RUNNER_ARCH"),
		Workflow: getenv("GITHUB_WORKFLOW"),
		RunID:    getenv("GITHUB_RUN_ID"),
	}
}
