package meta

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// TestGenerator: our own generator is ceiling-load; a GENERATOR is named
// by its command's base name, made safe and at most 64 characters.
func TestGenerator(t *testing.T) {
	for cmd, want := range map[string]string{
		"":                              "ceiling-load",
		"  ":                            "ceiling-load",
		"/opt/gen/node-ws --fast":       "node-ws",
		"./my gen":                      "my",
		"/x/.hidden$name":               "hidden-name",
		"/x/...":                        "generator",
		"/x/" + strings.Repeat("a", 70): strings.Repeat("a", 64),
	} {
		if got := Generator(cmd); got != want {
			t.Errorf("Generator(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestRunner: GitHub Actions' variables, and CI under any CI=true.
func TestRunner(t *testing.T) {
	env := map[string]string{"CI": "true", "RUNNER_NAME": "r1", "RUNNER_OS": "Linux", "GITHUB_RUN_ID": "42"}
	r := Runner(func(k string) string { return env[k] })
	if !r.CI || r.Name != "r1" || r.OS != "Linux" || r.RunID != "42" || r.Arch != "" {
		t.Errorf("Runner = %+v", r)
	}
	if r := Runner(func(string) string { return "" }); r.CI {
		t.Errorf("no CI variable: %+v", r)
	}
}

// TestPinning: the sets as asked, never null lists for what is granted
// later, and a warning for sets that overlap.
func TestPinning(t *testing.T) {
	o := knob.Options{ServerCPUs: pinning.CPUSet{1, 2}, GeneratorCPUs: pinning.CPUSet{2}, AllowOverlap: true}
	p := Pinning(o.Groups().CPUs, 4096)
	if len(p.ServerRequested) != 2 || len(p.GeneratorRequested) != 1 || p.ServerGranted == nil || p.GeneratorGranted == nil ||
		p.SMTSiblings == nil || p.NoFileLimit != 4096 || !p.OverlapAllowed {
		t.Errorf("Pinning = %+v", p)
	}
	if w := strings.Join(PinningWarnings(o.Groups().CPUs), "\n"); !strings.Contains(w, "server and generator share CPUs 2 (overlap allowed)") {
		t.Errorf("warnings %q lack the overlap", w)
	}
}

// TestTarget: the recorded target, whose command is [] (not null) for a
// multi-server target.
func TestTarget(t *testing.T) {
	m := Target(target.Spec{Name: "c", Servers: []target.Server{{Name: "n1", Command: []string{"srv", "-p", "{port}"}}}}, "echo")
	if m.Name != "c" || m.Command == nil || len(m.Command) != 0 || len(m.Servers) != 1 || m.Servers[0].Command[2] != "{port}" {
		t.Errorf("Target = %+v", m)
	}
}
