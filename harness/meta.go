package harness

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
