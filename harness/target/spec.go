package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/probe"
	"github.com/ceiling-bench/ceiling/internal/capfile"
	"github.com/ceiling-bench/ceiling/result"
)

// Spec is a server under test as a target file describes it
// (benchmark/targets/*.json). Strings may hold placeholders that each point
// fills with its own free loopback port: {port}, {host} (127.0.0.1) and
// {addr} ({host}:{port}), and with its second port {port2} and its own
// directory {workdir} (Addr). See docs/targets.md.
type Spec struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`       // argv; a relative command[0] is taken from Dir
	Env     map[string]string `json:"env,omitempty"` // the server's environment, with the allowlist (ChildEnviron)
	// PassEnv names variables of the harness's environment the servers
	// get too (they get PATH, HOME, LANG, TMPDIR and a few more, not the
	// rest: docs/targets.md, "Environment").
	PassEnv []string `json:"pass_env,omitempty"`
	Dir     string   `json:"dir,omitempty"` // working directory; relative to the harness's
	// Build is the command that builds the server, run with bash in the
	// checkout by `ceiling compare` (once per ref) and `ceiling init`.
	// The sweep never runs it: it measures what is built.
	Build string `json:"build,omitempty"`
	// Blocks are the scenarios' blocks, by their top-level key
	// ("echo_url", "fanout", ...: load.TargetDef.Key). The harness keeps
	// them raw and hands them to the scenario (Block); it does not know
	// what they mean.
	Blocks map[string]json.RawMessage `json:"-"`
	// AllowUnpinnedURL lets the scenario's URL name a fixed address
	// instead of the point's ({addr} or {port}): the generator then
	// drives some server other than the one booted pinned for the point,
	// and the result carries a warning saying so (--allow-unpinned-url).
	AllowUnpinnedURL bool `json:"allow_unpinned_url,omitempty"`
	// Ready is the readiness probe: "tcp:{addr}", an "http://..." URL that
	// answers 2xx, or "log:REGEX" matched against the server's output.
	Ready        string `json:"ready"`
	ReadyTimeout string `json:"ready_timeout,omitempty"` // Go duration; default 10s
	StopGrace    string `json:"stop_grace,omitempty"`    // SIGTERM to SIGKILL; default 5s
	// Costs are what the server takes to be ready after it starts and
	// to exit after SIGTERM, as Go durations: a two-arm sweep plans its
	// COMPARE_BUDGET from them before anything boots (docs/targets.md).
	// Nil: measured on the first block.
	Costs *Costs `json:"costs,omitempty"`
	// SecretEnv names env entries whose values are secret, and
	// SecretValues are literal secrets (e.g. one the server reads from a
	// file of its own): both are redacted from everything the harness
	// writes, as are fanout.secret, env entries named like secrets and
	// secret flag values of command (Secrets).
	SecretEnv    []string `json:"secret_env,omitempty"`
	SecretValues []string `json:"secrets,omitempty"`
	// SecretArgs are indexes into command of arguments that are secret
	// whole (a positional secret, or one after a flag not named like a
	// secret, e.g. "-k", "KEY").
	SecretArgs []int `json:"secret_args,omitempty"`

	// Metrics is read before and after each point's window; Profile is
	// fetched over it with --profile (servermetrics.go, profile.go).
	Metrics *result.MetricsSpec `json:"metrics,omitempty"`
	Profile *ProfileSpec        `json:"profile,omitempty"`

	// Servers, when given, are several servers booted for every point
	// (a cluster): each under its own supervisor, pinned to SRV_CPUSET
	// with the others, with its own log; the top-level command is then
	// empty. Command, env and ready of each take the placeholders, and the
	// top-level env and dir apply to every one (its own env wins).
	Servers []Server `json:"servers,omitempty"`

	// External says the server runs elsewhere, started and stopped by
	// someone else (a pod, a staging host): the harness boots nothing,
	// checks Ready (if given) before every point's load, and never stops
	// or signals it. Command, servers, env, dir and stop_grace are then
	// refused, and SRV_CPUSET does not apply. See docs/targets.md.
	External bool `json:"external,omitempty"`
	// ExternalCPUs are the cores an external server may use (its
	// container's limit, its host's cores): the denominator of its CPU
	// fraction, which the harness derives from process_cpu_seconds_total
	// in Metrics (verdict.ExternalCPU). 0: unknown, and then no point can
	// be server-saturated.
	ExternalCPUs int `json:"external_cpus,omitempty"`

	File string `json:"-"` // where it was read from

	// URL replaces the scenario block's URL (--url); see OverrideURL.
	URL string `json:"url,omitempty"`
}

// Costs is a target's expected boot and stop times (Spec.Costs).
type Costs struct {
	Ready string `json:"ready"`
	Stop  string `json:"stop"`
}

// BootCosts are Costs as durations; ok false when the target gives none
// (Check has vetted them).
func (t Spec) BootCosts() (ready, stop time.Duration, ok bool) {
	if t.Costs == nil {
		return 0, 0, false
	}
	ready, err1 := time.ParseDuration(t.Costs.Ready)
	stop, err2 := time.ParseDuration(t.Costs.Stop)
	return ready, stop, err1 == nil && err2 == nil
}

// Server is one of a multi-server target's servers (Spec.Servers).
type Server struct {
	// Name names the server in the result (Point.Servers), in failures
	// and in its log file (server-NAME.log): letters, digits, '-' and '_'.
	Name    string            `json:"name"`
	Command []string          `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	Ready   string            `json:"ready"`
}

// serverNameOK is what a server's name may hold.
var serverNameOK = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Multi reports whether the target boots several servers (Servers).
func (t Spec) Multi() bool { return len(t.Servers) > 0 }

// Booted are the servers a point boots, in order: the Servers, each with
// the top-level env under its own, or the top-level command as one
// server named "server".
func (t Spec) Booted() []Server {
	if t.External {
		return nil
	}
	if !t.Multi() {
		return []Server{{Name: "server", Command: t.Command, Env: t.Env, Ready: t.Ready}}
	}
	out := make([]Server, len(t.Servers))
	for i, s := range t.Servers {
		env := map[string]string{}
		for k, v := range t.Env {
			env[k] = v
		}
		for k, v := range s.Env {
			env[k] = v
		}
		out[i] = Server{Name: s.Name, Command: s.Command, Env: env, Ready: s.Ready}
	}
	return out
}

// Target defaults.
const (
	DefaultReadyTimeout = 10 * time.Second
	DefaultStopGrace    = 5 * time.Second
)

// Load reads and checks a target file; errors name the file and the
// field.
func Load(path string) (Spec, error) {
	data, err := capfile.Read("target file", path, capfile.Config)
	if err != nil {
		return Spec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	var t Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Spec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	// One object and nothing after it: a second object or stray text is
	// a file that was cut and pasted wrong, not one to half-read.
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return Spec{}, fmt.Errorf("TARGET %s: trailing data after the JSON object at byte %d", path, off)
	}
	t.File = path
	if err := t.Check(); err != nil {
		return Spec{}, fmt.Errorf("TARGET %s: %w", path, err)
	}
	return t, nil
}

// Check validates the fields; errors name the field.
func (t Spec) Check() error {
	var errs []error
	switch {
	case t.External:
		errs = append(errs, t.checkExternal()...)
	case t.ExternalCPUs != 0:
		errs = append(errs, errors.New(`external_cpus: only for an external target ("external": true); a booted server's cores are SRV_CPUSET`))
	}
	if t.External {
		// checkExternal did the server fields.
	} else if t.Multi() {
		errs = append(errs, t.checkServers()...)
	} else {
		if len(t.Command) == 0 || strings.TrimSpace(t.Command[0]) == "" {
			errs = append(errs, errors.New(`command: empty (for a server the harness does not boot, say "external": true)`))
		}
		all := strings.Join(t.Command, " ")
		for _, v := range t.Env {
			all += " " + v
		}
		if !hasPortPlaceholder(all) {
			errs = append(errs, errors.New("command/env: no {port} or {addr} placeholder, so the server cannot be given each point's free port"))
		}
		// Placeholders are filled with a stand-in port to check the syntax.
		if _, err := probe.Parse(Expand(t.Ready, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("ready: %w", err))
		}
	}
	for _, key := range sortedKeys(t.Blocks) {
		if _, err := t.parseBlock(key); err != nil {
			errs = append(errs, err)
		}
	}
	if n := t.PortsUsed(); n > MaxPorts {
		errs = append(errs, fmt.Errorf("{port%d}: at most {port%d}", n, MaxPorts))
	}
	errs = append(errs, t.checkPassEnv()...)
	errs = append(errs, t.CheckSecrets())
	errs = append(errs, t.checkMetrics()...)
	for name, v := range map[string]string{"ready_timeout": t.ReadyTimeout, "stop_grace": t.StopGrace} {
		if v == "" {
			continue
		}
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive duration", name, v))
		}
	}
	if c := t.Costs; c != nil {
		for _, f := range []struct{ name, v string }{{"costs.ready", c.Ready}, {"costs.stop", c.Stop}} {
			if d, err := time.ParseDuration(f.v); err != nil || d < 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a duration such as \"2s\"", f.name, f.v))
			}
		}
	}
	return errors.Join(errs...)
}

// checkExternal checks an external target: nothing to boot, so no
// command, servers, env, dir or stop_grace (each would be silently
// ignored); a ready probe the harness can poll from outside (not log:);
// and external_cpus only with Prometheus metrics, where the harness reads
// the server's process_cpu_seconds_total.
func (t Spec) checkExternal() []error {
	var errs []error
	const why = "an external target boots nothing"
	if len(t.Command) > 0 {
		errs = append(errs, fmt.Errorf(`command: %s; give "external": true or a command, not both`, why))
	}
	if len(t.Servers) > 0 {
		errs = append(errs, fmt.Errorf(`servers: %s; give "external": true or servers, not both`, why))
	}
	if len(t.Env) > 0 {
		errs = append(errs, fmt.Errorf("env: %s, so env would reach no server", why))
	}
	if t.Dir != "" {
		errs = append(errs, fmt.Errorf("dir: %s, so dir would be no server's working directory", why))
	}
	if t.StopGrace != "" {
		errs = append(errs, fmt.Errorf("stop_grace: %s and never stops the server", why))
	}
	if len(t.SecretArgs) > 0 {
		errs = append(errs, fmt.Errorf("secret_args: %s, so there is no command to index", why))
	}
	if t.Ready != "" {
		if strings.HasPrefix(t.Ready, "log:") {
			errs = append(errs, errors.New("ready: a log: probe reads the server's output, which an external server's is not; give tcp: or an http:// URL"))
		} else if _, err := probe.Parse(Expand(t.Ready, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("ready: %w", err))
		}
	}
	switch {
	case t.ExternalCPUs < 0:
		errs = append(errs, fmt.Errorf("external_cpus: %d is not a positive number of cores", t.ExternalCPUs))
	case t.ExternalCPUs > 0 && (t.Metrics == nil || (t.Metrics.Format != "" && t.Metrics.Format != MetricsPrometheus)):
		errs = append(errs, errors.New("external_cpus: needs metrics in the prometheus format exposing process_cpu_seconds_total, where the server's CPU is read"))
	}
	return errs
}

// checkServers checks a multi-server target: no top-level command or
// ready (each server has its own), and every server named uniquely, with
// a command that takes a port placeholder and a ready probe.
func (t Spec) checkServers() []error {
	var errs []error
	if len(t.Command) > 0 {
		errs = append(errs, errors.New("command: give command (one server) or servers, not both"))
	}
	if t.Ready != "" {
		errs = append(errs, errors.New("ready: with servers, each server has its own ready"))
	}
	seen := map[string]bool{}
	for i, s := range t.Servers {
		f := fmt.Sprintf("servers[%d]", i)
		switch {
		case !serverNameOK.MatchString(s.Name):
			errs = append(errs, fmt.Errorf("%s.name: %q: want letters, digits, '-' and '_'", f, s.Name))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("%s.name: %q given twice", f, s.Name))
		}
		seen[s.Name] = true
		if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
			errs = append(errs, fmt.Errorf("%s.command: empty", f))
		}
		all := strings.Join(s.Command, " ")
		for _, v := range s.Env {
			all += " " + v
		}
		for _, v := range t.Env {
			all += " " + v
		}
		if !hasPortPlaceholder(all) {
			errs = append(errs, fmt.Errorf("%s.command/env: no {port}, {portN} or {addr} placeholder, so the server cannot be given the point's free ports", f))
		}
		if _, err := probe.Parse(Expand(s.Ready, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("%s.ready: %w", f, err))
		}
	}
	return errs
}

// Warnings are what the result must say about a target that was allowed
// to run: a URL that does not take the point's address.
func (t Spec) Warnings(scenario string) []string {
	if t.External {
		return nil // meta.target.external says so; the verdict says what it knows of its CPU
	}
	u, err := t.URLFor(scenario)
	if err != nil || pinnedURL(u) {
		return nil
	}
	return []string{fmt.Sprintf("%s %q does not name the point's address as its host and port ({addr}, or {host}:{port}), allowed by allow_unpinned_url: the generator drove a server the harness did not boot, pin or sample, so the CPU figures and verdicts are not about the server measured", t.urlField(scenario), u)}
}

// Durations returns the ready timeout and stop grace with defaults applied
// (Check has vetted them).
func (t Spec) Durations() (ready, grace time.Duration) {
	ready, grace = DefaultReadyTimeout, DefaultStopGrace
	if d, err := time.ParseDuration(t.ReadyTimeout); err == nil {
		ready = d
	}
	if d, err := time.ParseDuration(t.StopGrace); err == nil {
		grace = d
	}
	return ready, grace
}

// CheckRunnable checks what Check cannot from the file alone: that the
// working directory and the command exist (run `make build` for
// bin/refserver), and that the target has an endpoint for the scenario
// that takes the point's address (unless AllowUnpinnedURL).
func (t Spec) CheckRunnable(scenario string) error {
	var errs []error
	dirOK := true
	if t.Dir != "" {
		// Else the fork fails as "fork/exec /proc/self/exe: no such file",
		// which names neither the field nor the directory.
		if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("dir: %s is not a directory", t.Dir))
			dirOK = false
		}
	}
	for i, srv := range t.Booted() {
		if len(srv.Command) == 0 || !dirOK {
			continue
		}
		field := "command"
		if t.Multi() {
			field = fmt.Sprintf("servers[%d].command", i)
		}
		name := srv.Command[0]
		if strings.ContainsRune(name, os.PathSeparator) {
			if !filepath.IsAbs(name) && t.Dir != "" {
				name = filepath.Join(t.Dir, name)
			}
			if fi, err := os.Stat(name); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				errs = append(errs, fmt.Errorf("%s: %s is not an executable file (for bin/refserver run make build)", field, name))
			}
		} else if _, err := exec.LookPath(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	errs = append(errs, t.checkEnvNames(scenario)...)
	if u, err := t.URLFor(scenario); err != nil {
		errs = append(errs, err)
	} else if t.External {
		// The server has its own fixed address: a point's port would
		// name nothing.
		for i, u := range append([]string{u}, t.moreURLs(scenario)...) {
			if hasPortPlaceholder(u) {
				errs = append(errs, fmt.Errorf("%s: the URL #%d, %q, takes a point's port ({addr}, {port} or {portN}), but an external server listens where it was started: give its address", t.urlField(scenario), i+1, u))
			}
		}
	} else if !pinnedURL(u) && !t.AllowUnpinnedURL {
		errs = append(errs, fmt.Errorf("%s: %q does not name the point's address as its host and port ({addr}, or {host}:{port}), so the generator would drive some other server than the one booted pinned for each point (set \"allow_unpinned_url\": true in the target, or pass --allow-unpinned-url, to run anyway, with a warning in the result)", t.urlField(scenario), u))
	} else if !t.AllowUnpinnedURL {
		for i, u := range t.moreURLs(scenario) {
			if !pinnedURL(u) {
				errs = append(errs, fmt.Errorf("%s: the URL #%d, %q, does not name a point's address as its host and port ({addr}, or {host}:{port}/{portN}), so the generator would drive some server the harness did not boot", t.urlField(scenario), i+2, u))
			}
		}
	}
	return errors.Join(errs...)
}

// ProfileSpec is a target's "profile": a URL that answers with a profile
// taken over {seconds} seconds, e.g. Go's
// http://{addr}/debug/pprof/profile?seconds={seconds}.
type ProfileSpec struct {
	URL string `json:"url"`
}
