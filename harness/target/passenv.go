package target

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/load"
)

// runnerEnvNames are the CI runner's variables no child may see, even if
// a target names them in pass_env: the job's token, and the files a
// later step reads (a child that writes GITHUB_ENV sets the next steps'
// environment).
var runnerEnvNames = []string{"GITHUB_TOKEN", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"}

// RunnerEnv reports whether name is one of the runner's variables that no
// child gets: runnerEnvNames and ACTIONS_*.
func RunnerEnv(name string) bool {
	if strings.HasPrefix(name, "ACTIONS_") {
		return true
	}
	for _, n := range runnerEnvNames {
		if name == n {
			return true
		}
	}
	return false
}

var envNameOK = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkPassEnv validates pass_env: variable names, none of the runner's.
func (t Spec) checkPassEnv() []error {
	var errs []error
	for i, n := range t.PassEnv {
		switch {
		case !envNameOK.MatchString(n):
			errs = append(errs, fmt.Errorf("pass_env[%d]: %q is not a variable name", i, n))
		case RunnerEnv(n):
			errs = append(errs, fmt.Errorf("pass_env[%d]: %s is the CI runner's, never passed to a server", i, n))
		}
	}
	return errs
}

// checkEnvNames: every variable the scenario reads in the generator (a
// scenario file's {env:NAME} and key_env, load.EnvBlock) is one pass_env
// names, since the generator gets no other (ChildEnviron).
func (t Spec) checkEnvNames(scenario string) []error {
	blk, err := t.Block(scenario)
	if err != nil {
		return nil // URLFor says why
	}
	eb, ok := blk.(load.EnvBlock)
	if !ok {
		return nil
	}
	var errs []error
	for _, n := range eb.EnvNames() {
		switch {
		case RunnerEnv(n):
			errs = append(errs, fmt.Errorf("%s: the scenario file reads {env:%s}, the CI runner's, which no generator gets", BlockKey(scenario), n))
		case !slices.Contains(t.PassEnv, n):
			errs = append(errs, fmt.Errorf("%s: the scenario file reads {env:%s}, which pass_env does not name: the generator gets only the variables pass_env names (docs/targets.md, \"Environment\")", BlockKey(scenario), n))
		}
	}
	return errs
}
