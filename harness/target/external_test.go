package target_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/target"
)

// TestTargetExternalFields: the external form's bad input is refused by
// LoadTarget, each error naming its field.
func TestTargetExternalFields(t *testing.T) {
	const base = `"name":"x","echo_url":"ws://127.0.0.1:6001/echo"`
	metrics := `"metrics":{"url":"http://127.0.0.1:6001/metrics"}`
	tests := []struct{ name, body, want string }{
		{"ok", `"external":true,` + base, ""},
		{"ok with cpus and metrics", `"external":true,"external_cpus":2,"ready":"http://127.0.0.1:6001/health",` + metrics + `,` + base, ""},
		{"no command, not external", base, `command: empty (for a server the harness does not boot, say "external": true)`},
		{"external with a command", `"external":true,"command":["x","{addr}"],` + base, "command: an external target boots nothing"},
		{"external with servers", `"external":true,"servers":[{"name":"a","command":["x","{addr}"],"ready":"tcp:{addr}"}],` + base, "servers: an external target boots nothing"},
		{"external with env", `"external":true,"env":{"A":"b"},` + base, "env: an external target boots nothing"},
		{"external with dir", `"external":true,"dir":"/tmp",` + base, "dir: an external target boots nothing"},
		{"external with stop_grace", `"external":true,"stop_grace":"1s",` + base, "stop_grace: an external target"},
		{"external with a log probe", `"external":true,"ready":"log:listening",` + base, "ready: a log: probe"},
		{"external_cpus without external", `"command":["x","{addr}"],"ready":"tcp:{addr}","external_cpus":2,` + base, "external_cpus: only for an external target"},
		{"external_cpus without metrics", `"external":true,"external_cpus":2,` + base, "external_cpus: needs metrics"},
		{"external_cpus with JSON metrics", `"external":true,"external_cpus":2,"metrics":{"url":"http://127.0.0.1:6001/m","format":"json"},` + base, "external_cpus: needs metrics"},
		{"external_cpus negative", `"external":true,"external_cpus":-1,` + metrics + `,` + base, "external_cpus: -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.json")
			if err := os.WriteFile(p, []byte("{"+tt.body+"}"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := target.Load(p)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	// An external server listens where it was started: a point's port in
	// its URL names nothing.
	tg := target.Spec{Name: "x", External: true}
	tg.SetBlock("echo_url", []byte(`"ws://{addr}/echo"`))
	if err := tg.CheckRunnable("echo"); err == nil || !strings.Contains(err.Error(), "echo_url") {
		t.Errorf("CheckRunnable: %v, want an error naming echo_url", err)
	}
}
