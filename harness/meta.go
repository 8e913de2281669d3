package harness

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// runnerFromEnv reads GitHub Actions' variables; CI is also true under any
// CI=true.
func runnerFromEnv(getenv func(string) string) result.Runner {
	return result.Runner{
		CI:       getenv("GITHUB_ACTIONS") == "true" || getenv("CI") == "true",
		Name:     getenv("RUNNER_NAME"),
		OS:       getenv("RUNNER_OS"),
		Arch:     getenv("RUNNER_ARCH"),
		Workflow: getenv("GITHUB_WORKFLOW"),
		RunID:    getenv("GITHUB_RUN_ID"),
	}
}

// generatorName is the result's meta.generator: "ceiling-load" for our
// own, else the GENERATOR command's base name.
func generatorName(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "ceiling-load"
	}
	n := regexp.MustCompile(`[^A-Za-z0-9._-]`).ReplaceAllString(filepath.Base(f[0]), "-")
	n = strings.TrimLeft(n, ".-_")
	if n == "" {
		n = "generator"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

func pinningOf(o knob.CPUs) result.Pinning {
	p := result.Pinning{
		Supported:          pinning.Supported,
		ServerRequested:    o.Server.Ints(),
		GeneratorRequested: o.Generator.Ints(),
		ServerGranted:      []int{},
		GeneratorGranted:   []int{},
		OverlapAllowed:     o.AllowOverlap,
		SMTSiblings:        [][2]int{},
		NoFileLimit:        NoFileLimit,
		DuetServer:         o.DuetServer.Ints(),
		DuetGenerator:      o.DuetGenerator.Ints(),
	}
	if pairs, err := pinning.SMTSiblings(o.Server, o.Generator); err == nil && pairs != nil {
		p.SMTSiblings = pairs
	}
	return p
}

func pinningWarnings(o knob.CPUs) []string {
	var w []string
	if !pinning.Supported {
		w = append(w, "CPU pinning is unsupported on this system: server and generator ran unpinned")
	}
	if shared := pinning.Overlap(o.Server, o.Generator); len(shared) > 0 {
		w = append(w, fmt.Sprintf("server and generator share CPUs %s (overlap allowed): the generator steals server CPU and the numbers are not a clean ceiling", shared))
	}
	if pairs, err := pinning.SMTSiblings(o.Server, o.Generator); err == nil && len(pairs) > 0 {
		w = append(w, fmt.Sprintf("server and generator CPUs are SMT siblings of one physical core %v: they compete for its execution units", pairs))
	}
	return w
}
