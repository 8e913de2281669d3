package harness

import "github.com/ceiling-bench/ceiling/result"

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
