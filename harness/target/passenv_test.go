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

// TestScenarioEnvNeedsPassEnv: a scenario file that reads {env:NAME}
// runs in a sweep only when the target's pass_env names NAME (the
// generator gets no other variable); the runner's own is refused even
// then. Each error names the variable.
func TestScenarioEnvNeedsPassEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SCENARIO_API_KEY", "a-key-of-some-length")
	t.Setenv("GITHUB_TOKEN", "ghs_token-of-some-length")
	file := filepath.Join(dir, "s.json")
	for _, c := range []struct{ url, header, pass, want string }{
		{"{url}/ws", "Bearer {env:SCENARIO_API_KEY}", `[]`, "reads {env:SCENARIO_API_KEY}, which pass_env does not name"},
		{"{url}/ws", "Bearer {env:SCENARIO_API_KEY}", `["SCENARIO_API_KEY"]`, ""},
		{"{url}/ws", "Bearer {env:GITHUB_TOKEN}", `["SCENARIO_API_KEY"]`, "reads {env:GITHUB_TOKEN}, the CI runner's"},
		// A declared key still goes only to the server under test.
		{"ws://collector.example/ws", "Bearer {env:SCENARIO_API_KEY}", `["SCENARIO_API_KEY"]`, `connect.url: "ws://collector.example/ws" must start with {url}`},
	} {
		scen := `{"connect": {"url": "` + c.url + `", "headers": {"Authorization": "` + c.header + `"}}, "roles": [{"name": "r", "sends": [{"name": "s", "rate": 1, "message": {"p": "{payload}"}}]}]}`
		if err := os.WriteFile(file, []byte(scen), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "t.json")
		doc := `{"name": "s", "command": ["/bin/true", "{addr}"], "ready": "tcp:{addr}", "script": {"url": "ws://{addr}", "file": "` + file + `"}, "pass_env": ` + c.pass + `}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		tg, err := Load(p) // the file's own errors come here
		if err == nil {
			err = tg.CheckRunnable("script")
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s with pass_env %s: %v, want %q", c.header, c.pass, err, c.want)
		}
	}
}
