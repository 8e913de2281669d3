package load

import (
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// CollectMeta records where and how a number was produced: command,
// git_ref, version and hardware. Every probe degrades to an empty value
// rather than failing the run. The harness may reuse it for its own meta.
func CollectMeta(o Options) Meta {
	return Meta{
		Command:   o.Command,
		GitRef:    gitRef(),
		Version:   o.Version,
		StartedAt: time.Now().UTC(),
		Hardware:  hardware(),
	}
}

// gitRef is HEAD, with -dirty when `git status --porcelain` lists
// anything, or "unknown" outside a checkout (or without git).
func gitRef() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	ref := strings.TrimSpace(string(out))
	st, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		return ref
	}
	if len(strings.TrimSpace(string(st))) > 0 {
		ref += "-dirty"
	}
	return ref
}

func hardware() Hardware {
	h := Hardware{
		CPUModel:    cpuModel(),
		LogicalCPUs: runtime.NumCPU(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		GoVersion:   runtime.Version(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
	}
	fillPlatform(&h)
	return h
}

func cpuModel() string {
	m, _ := procfs.CPUModel()
	return m
}
