package target

import "strings"

// A child the harness starts (a server, the generator, an agent) does not
// inherit the harness's environment: on a CI runner that holds the job's
// token and the files later steps read (GITHUB_ENV, GITHUB_OUTPUT, ...),
// and a server under test, a pull request's, must not write those. It
// gets an allowlist instead (docs/targets.md, "Environment"): what any
// program needs to run (childEnvNames, LC_*), and then
//   - a server: the target's env (supervise.Spec.Env) and the names its
//     pass_env lists;
//   - the generator and agents (this binary, or a GENERATOR command):
//     also Go's runtime settings (GO*) and ceiling's own (CEILING_*).

// childEnvNames are passed to every child.
var childEnvNames = []string{"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "USER", "LOGNAME", "TERM"}

// GeneratorEnvPrefixes are passed to the generator and the agents too.
var GeneratorEnvPrefixes = []string{"GO", "CEILING_"}

// ChildEnviron is environ filtered to what a child gets: childEnvNames,
// LC_*, the names in pass, and the names with one of prefixes; never one
// RunnerEnv refuses.
func ChildEnviron(environ, pass, prefixes []string) []string {
	keep := func(name string) bool {
		if RunnerEnv(name) {
			return false
		}
		for _, n := range childEnvNames {
			if name == n {
				return true
			}
		}
		for _, n := range pass {
			if name == n {
				return true
			}
		}
		for _, p := range append([]string{"LC_"}, prefixes...) {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	out := []string{}
	for _, kv := range environ {
		if name, _, ok := strings.Cut(kv, "="); ok && keep(name) {
			out = append(out, kv)
		}
	}
	return out
}
