//go:build e2e

package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// TestServerEnvironmentAllowlisted: the server under test starts with an
// allowlist of the harness's environment, not the whole of it. On a CI
// runner the job's token and the files later steps read are there
// (GITHUB_ENV: a server that appends to it sets the next steps'
// environment); the server sees none of them, nor a variable the target
// does not name, and does see PATH, its env and its pass_env.
func TestServerEnvironmentAllowlisted(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	runnerEnv := filepath.Join(dir, "github_env")
	for k, v := range map[string]string{
		"GITHUB_ENV": runnerEnv, "GITHUB_OUTPUT": runnerEnv, "GITHUB_PATH": runnerEnv,
		"GITHUB_STEP_SUMMARY": runnerEnv, "GITHUB_TOKEN": "ghs_a-runner-token-0123456789",
		"ACTIONS_RUNTIME_TOKEN": "a-runtime-token-0123456789", "UNNAMED_SETTING": "not for the server",
		"PASSED_SETTING": "for the server",
	} {
		t.Setenv(k, v)
	}
	dump := filepath.Join(dir, "server-env")
	tg := refTarget(t)
	tg.Command = append([]string{"/bin/sh", "-c", `env > "$0"; [ -n "$GITHUB_ENV" ] && echo INJECTED=1 >> "$GITHUB_ENV"; exec "$@"`, dump}, tg.Command...)
	tg.PassEnv = []string{"PASSED_SETTING"}
	tg.Env = map[string]string{"TARGET_SETTING": "from the target"}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	runSweepOnce(t, ctx, o, tg)
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the server did not start: %v", err)
	}
	env := "\n" + string(b)
	for _, name := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "UNNAMED_SETTING"} {
		if strings.Contains(env, "\n"+name+"=") {
			t.Errorf("the server's environment holds %s", name)
		}
	}
	for _, want := range []string{"PATH=", "PASSED_SETTING=for the server", "TARGET_SETTING=from the target"} {
		if !strings.Contains(env, "\n"+want) {
			t.Errorf("the server's environment has no %s", want)
		}
	}
	if _, err := os.Stat(runnerEnv); err == nil {
		t.Error("the server wrote the runner's GITHUB_ENV")
	}
}
