package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPassEnvChecked: pass_env names variables; the runner's own (the
// token, the files later steps read, ACTIONS_*) are refused by name.
func TestPassEnvChecked(t *testing.T) {
	for _, c := range []struct{ pass, want string }{
		{`["DB_URL", "LOG_LEVEL"]`, ""},
		{`["GITHUB_TOKEN"]`, "pass_env[0]: GITHUB_TOKEN is the CI runner's"},
		{`["OK", "GITHUB_ENV"]`, "pass_env[1]: GITHUB_ENV is the CI runner's"},
		{`["ACTIONS_RUNTIME_TOKEN"]`, "pass_env[0]: ACTIONS_RUNTIME_TOKEN"},
		{`["A=B"]`, `pass_env[0]: "A=B" is not a variable name`},
	} {
		p := filepath.Join(t.TempDir(), "t.json")
		doc := `{"name": "s", "command": ["srv", "{addr}"], "ready": "tcp:{addr}", "echo_url": "ws://{addr}/", "pass_env": ` + c.pass + `}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("pass_env %s: %v, want %q", c.pass, err, c.want)
		}
	}
}
