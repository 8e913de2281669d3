package meta

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// Runner is meta.runner from GitHub Actions' variables; CI is also true
// under any CI=true.
func Runner(getenv func(string) string) result.Runner {
	return result.Runner{
		CI:       getenv("GITHUB_ACTIONS") == "true" || getenv("CI") == "true",
		Name:     getenv("RUNNER_NAME"),
		OS:       getenv("RUNNER_OS"),
		Arch:     getenv("RUNNER_ARCH"),
		Workflow: getenv("GITHUB_WORKFLOW"),
		RunID:    getenv("GITHUB_RUN_ID"),
	}
}

// Generator is meta.generator: "ceiling-load" for our own, else the
// GENERATOR command's base name, made safe for a file name (at most 64
// characters).
func Generator(cmd string) string {
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

// Pinning is meta.pinning as o asks for it, before anything is granted:
// the sets, the overlap allowed, the SMT siblings they share, the duet's
// second half, and noFile, the RLIMIT_NOFILE the children are asked to
// get. The run fills in what the kernel granted.
func Pinning(o knob.CPUs, noFile uint64) result.Pinning {
	p := result.Pinning{
		Supported:          pinning.Supported,
		ServerRequested:    o.Server.Ints(),
		GeneratorRequested: o.Generator.Ints(),
		ServerGranted:      []int{},
		GeneratorGranted:   []int{},
		OverlapAllowed:     o.AllowOverlap,
		SMTSiblings:        [][2]int{},
		NoFileLimit:        noFile,
		DuetServer:         o.DuetServer.Ints(),
		DuetGenerator:      o.DuetGenerator.Ints(),
	}
	if pairs, err := pinning.SMTSiblings(o.Server, o.Generator); err == nil && pairs != nil {
		p.SMTSiblings = pairs
	}
	return p
}

// PinningWarnings are the result's warnings about o's sets: no pinning
// here, sets that overlap, or SMT siblings of one core.
func PinningWarnings(o knob.CPUs) []string {
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

// Target is meta.target (and meta.base_target): t as the result records
// it, with the scenario's URL.
func Target(t target.Spec, scenario string) result.Target {
	m := result.Target{Name: t.Name, File: t.File, Command: append([]string{}, t.Command...), // [] not null for a multi-server target
		External: t.External, ExternalCPUs: t.ExternalCPUs}
	m.URL, _ = t.URLFor(scenario)
	for _, s := range t.Servers {
		m.Servers = append(m.Servers, result.TargetServer{Name: s.Name, Command: append([]string(nil), s.Command...)})
	}
	return m
}
