package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/redact"
	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// TargetSpec is a server under test as a target file describes it
// (benchmark/targets/*.json). Strings may hold placeholders that each point
// fills with its own free loopback port: {port}, {host} (127.0.0.1) and
// {addr} ({host}:{port}). See docs/sweep.md.
type TargetSpec struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`       // argv; a relative command[0] is taken from Dir
	Env     map[string]string `json:"env,omitempty"` // added to the harness's environment
	Dir     string            `json:"dir,omitempty"` // working directory; relative to the harness's
	EchoURL string            `json:"echo_url"`      // scenario echo
	Fanout  *FanoutTarget     `json:"fanout,omitempty"`
	// Ready is the readiness probe: "tcp:{addr}", an "http://..." URL that
	// answers 2xx, or "log:REGEX" matched against the server's output.
	Ready        string `json:"ready"`
	ReadyTimeout string `json:"ready_timeout,omitempty"` // Go duration; default 10s
	StopGrace    string `json:"stop_grace,omitempty"`    // SIGTERM to SIGKILL; default 5s
	// SecretEnv names env entries whose values are secret, and
	// SecretValues are literal secrets (e.g. one the server reads from a
	// file of its own): both are redacted from everything the harness
	// writes, as are fanout.secret, env entries named like secrets and
	// secret flag values of command (Secrets).
	SecretEnv    []string `json:"secret_env,omitempty"`
	SecretValues []string `json:"secrets,omitempty"`

	File string `json:"-"` // where it was read from
}

// FanoutTarget is what the fan-out scenario needs: the Pusher endpoint and
// an app's credentials (the secret signs REST publishes and is never
// recorded in a result).
type FanoutTarget struct {
	URL      string `json:"url"`
	AppID    string `json:"app_id"`
	Key      string `json:"key"`
	Secret   string `json:"secret"`
	Channels int    `json:"channels,omitempty"`
}

// Target defaults.
const (
	DefaultReadyTimeout = 10 * time.Second
	DefaultStopGrace    = 5 * time.Second
)

// LoadTarget reads and checks a target file; errors name the file and the
// field.
func LoadTarget(path string) (TargetSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TargetSpec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	var t TargetSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return TargetSpec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	t.File = path
	if err := t.Check(); err != nil {
		return TargetSpec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	return t, nil
}

// Check validates the fields; errors name the field.
func (t TargetSpec) Check() error {
	var errs []error
	if len(t.Command) == 0 || strings.TrimSpace(t.Command[0]) == "" {
		errs = append(errs, errors.New("command: empty"))
	}
	all := strings.Join(t.Command, " ")
	for _, v := range t.Env {
		all += " " + v
	}
	if !strings.Contains(all, "{port}") && !strings.Contains(all, "{addr}") {
		errs = append(errs, errors.New("command/env: no {port} or {addr} placeholder, so the server cannot be given each point's free port"))
	}
	// Placeholders are filled with a stand-in port to check the syntax.
	if _, err := supervise.ParseProbe(Expand(t.Ready, 1)); err != nil {
		errs = append(errs, fmt.Errorf("ready: %w", err))
	}
	errs = append(errs, t.CheckSecrets())
	for name, v := range map[string]string{"ready_timeout": t.ReadyTimeout, "stop_grace": t.StopGrace} {
		if v == "" {
			continue
		}
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive duration", name, v))
		}
	}
	return errors.Join(errs...)
}

// Secrets is every secret the target holds, to be redacted from all the
// harness writes: fanout.secret, the literal "secrets", the values of the
// env entries "secret_env" names, env entries whose names say they are
// secret (redact.FromEnviron) and secret flag values of command
// (redact.FromArgs). Placeholders are not filled in: a secret is taken as
// written.
func (t TargetSpec) Secrets() []string {
	var out []string
	seen := map[string]bool{}
	add := func(xs ...string) {
		for _, x := range xs {
			if x != "" && !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	if t.Fanout != nil {
		add(t.Fanout.Secret)
	}
	add(t.SecretValues...)
	for _, name := range t.SecretEnv {
		add(t.Env[name])
	}
	names := make([]string, 0, len(t.Env))
	for k := range t.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		add(redact.FromEnviron([]string{k + "=" + t.Env[k]})...)
	}
	add(redact.FromArgs(t.Command)...)
	return out
}

// CheckSecrets checks the secret fields: every secret_env name is an env
// entry, and no secret is shorter than redact.MinLen (a short one cannot
// be masked in free text such as a server's log without destroying it, so
// the harness refuses it rather than publish it). Errors name the field.
func (t TargetSpec) CheckSecrets() error {
	var errs []error
	for _, name := range t.SecretEnv {
		if _, ok := t.Env[name]; !ok {
			errs = append(errs, fmt.Errorf("secret_env: %q is not an entry of env", name))
		}
	}
	for i, v := range t.SecretValues {
		if v == "" {
			errs = append(errs, fmt.Errorf("secrets[%d]: empty", i))
		}
	}
	short := func(field string, v string) {
		if v != "" && len(v) < redact.MinLen {
			errs = append(errs, fmt.Errorf("%s: a secret of %d characters is too short to redact from logs (at least %d): use a longer one", field, len(v), redact.MinLen))
		}
	}
	if t.Fanout != nil {
		short("fanout.secret", t.Fanout.Secret)
	}
	for i, v := range t.SecretValues {
		short(fmt.Sprintf("secrets[%d]", i), v)
	}
	names := make([]string, 0, len(t.Env))
	for k := range t.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if slices.Contains(t.SecretEnv, k) || redact.SecretName(k) {
			short("env."+k, t.Env[k])
		}
	}
	for _, v := range redact.FromArgs(t.Command) {
		short("command (a secret flag's value)", v)
	}
	return errors.Join(errs...)
}

// URLFor is the URL the generator is given for a scenario.
func (t TargetSpec) URLFor(scenario string) (string, error) {
	if scenario == ScenarioFanout {
		if t.Fanout == nil || t.Fanout.URL == "" {
			return "", errors.New("fanout.url: the target has no fan-out endpoint")
		}
		return t.Fanout.URL, nil
	}
	if t.EchoURL == "" {
		return "", errors.New("echo_url: the target has no echo endpoint")
	}
	return t.EchoURL, nil
}

// Durations returns the ready timeout and stop grace with defaults applied
// (Check has vetted them).
func (t TargetSpec) Durations() (ready, grace time.Duration) {
	ready, grace = DefaultReadyTimeout, DefaultStopGrace
	if d, err := time.ParseDuration(t.ReadyTimeout); err == nil {
		ready = d
	}
	if d, err := time.ParseDuration(t.StopGrace); err == nil {
		grace = d
	}
	return ready, grace
}

// Expand fills the placeholders for one point's port.
func Expand(s string, port int) string {
	p := strconv.Itoa(port)
	return strings.NewReplacer("{addr}", "127.0.0.1:"+p, "{host}", "127.0.0.1", "{port}", p).Replace(s)
}

// FreePort asks the kernel for a free loopback port. It is free when this
// returns; the server binds it a moment later (a race another process could
// win, which then fails that point's readiness, not the sweep).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CheckRunnable checks what Check cannot from the file alone: that the
// command exists (run `make build` for bin/refserver) and that the target
// has an endpoint for the scenario.
func (t TargetSpec) CheckRunnable(scenario string) error {
	var errs []error
	if len(t.Command) > 0 {
		name := t.Command[0]
		if strings.ContainsRune(name, os.PathSeparator) {
			if !filepath.IsAbs(name) && t.Dir != "" {
				name = filepath.Join(t.Dir, name)
			}
			if fi, err := os.Stat(name); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				errs = append(errs, fmt.Errorf("command: %s is not an executable file (for bin/refserver run make build)", name))
			}
		} else if _, err := exec.LookPath(name); err != nil {
			errs = append(errs, fmt.Errorf("command: %w", err))
		}
	}
	if _, err := t.URLFor(scenario); err != nil {
		errs = append(errs, err)
	}
	if scenario == ScenarioFanout && t.Fanout != nil && (t.Fanout.AppID == "" || t.Fanout.Key == "" || t.Fanout.Secret == "") {
		errs = append(errs, errors.New("fanout: app_id, key and secret are all needed"))
	}
	return errors.Join(errs...)
}
