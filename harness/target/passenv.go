package target

import (
	"fmt"
	"regexp"
	"strings"
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
