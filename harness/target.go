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
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
)

// TargetSpec is a server under test as a target file describes it
// (benchmark/targets/*.json). Strings may hold placeholders that each point
// fills with its own free loopback port: {port}, {host} (127.0.0.1) and
// {addr} ({host}:{port}), and with its second port {port2} and its own
// directory {workdir} (PointAddr). See docs/targets.md.
type TargetSpec struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`       // argv; a relative command[0] is taken from Dir
	Env     map[string]string `json:"env,omitempty"` // added to the harness's environment
	Dir     string            `json:"dir,omitempty"` // working directory; relative to the harness's
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
	Metrics *MetricsSpec `json:"metrics,omitempty"`
	Profile *ProfileSpec `json:"profile,omitempty"`

	// Servers, when given, are several servers booted for every point
	// (a cluster): each under its own supervisor, pinned to SRV_CPUSET
	// with the others, with its own log; the top-level command is then
	// empty. Command, env and ready of each take the placeholders, and the
	// top-level env and dir apply to every one (its own env wins).
	Servers []ServerSpec `json:"servers,omitempty"`

	// External says the server runs elsewhere, started and stopped by
	// someone else (a pod, a staging host): the harness boots nothing,
	// checks Ready (if given) before every point's load, and never stops
	// or signals it. Command, servers, env, dir and stop_grace are then
	// refused, and SRV_CPUSET does not apply. See docs/targets.md.
	External bool `json:"external,omitempty"`
	// ExternalCPUs are the cores an external server may use (its
	// container's limit, its host's cores): the denominator of its CPU
	// fraction, which the harness derives from process_cpu_seconds_total
	// in Metrics (externalCPU). 0: unknown, and then no point can be
	// server-saturated.
	ExternalCPUs int `json:"external_cpus,omitempty"`

	File string `json:"-"` // where it was read from

	// URL replaces the scenario block's URL (--url); see OverrideURL.
	URL string `json:"url,omitempty"`
}

// ServerSpec is one of a multi-server target's servers (TargetSpec.Servers).
type ServerSpec struct {
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
func (t TargetSpec) Multi() bool { return len(t.Servers) > 0 }

// Booted are the servers a point boots, in order: the Servers, each with
// the top-level env under its own, or the top-level command as one
// server named "server".
func (t TargetSpec) Booted() []ServerSpec {
	if t.External {
		return nil
	}
	if !t.Multi() {
		return []ServerSpec{{Name: "server", Command: t.Command, Env: t.Env, Ready: t.Ready}}
	}
	out := make([]ServerSpec, len(t.Servers))
	for i, s := range t.Servers {
		env := map[string]string{}
		for k, v := range t.Env {
			env[k] = v
		}
		for k, v := range s.Env {
			env[k] = v
		}
		out[i] = ServerSpec{Name: s.Name, Command: s.Command, Env: env, Ready: s.Ready}
	}
	return out
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
	// One object and nothing after it: a second object or stray text is
	// a file that was cut and pasted wrong, not one to half-read.
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return TargetSpec{}, fmt.Errorf("TARGET %s: trailing data after the JSON object at byte %d", path, off)
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
		if _, err := supervise.ParseProbe(Expand(t.Ready, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("ready: %w", err))
		}
	}
	for _, key := range sortedKeys(t.Blocks) {
		if _, err := t.parseBlock(key); err != nil {
			errs = append(errs, err)
		}
	}
	if n := t.portsUsed(); n > MaxPorts {
		errs = append(errs, fmt.Errorf("{port%d}: at most {port%d}", n, MaxPorts))
	}
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
	return errors.Join(errs...)
}

// checkExternal checks an external target: nothing to boot, so no
// command, servers, env, dir or stop_grace (each would be silently
// ignored); a ready probe the harness can poll from outside (not log:);
// and external_cpus only with Prometheus metrics, where the harness reads
// the server's process_cpu_seconds_total.
func (t TargetSpec) checkExternal() []error {
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
		} else if _, err := supervise.ParseProbe(Expand(t.Ready, t.standInAddr())); err != nil {
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
func (t TargetSpec) checkServers() []error {
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
		if _, err := supervise.ParseProbe(Expand(s.Ready, t.standInAddr())); err != nil {
			errs = append(errs, fmt.Errorf("%s.ready: %w", f, err))
		}
	}
	return errs
}

// Secrets is every secret the target holds, to be redacted from all the
// harness writes: fanout.secret, the literal "secrets", the command
// arguments "secret_args" points at, the values of the
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
	for _, sec := range t.blockSecrets() {
		add(sec.value)
	}
	add(t.SecretValues...)
	for _, i := range t.SecretArgs {
		if i >= 0 && i < len(t.Command) {
			add(t.Command[i])
		}
	}
	for _, name := range t.SecretEnv {
		add(t.Env[name])
	}
	for _, k := range sortedKeys(t.Env) {
		add(redact.FromEnviron([]string{k + "=" + t.Env[k]})...)
	}
	add(redact.FromArgs(t.Command)...)
	for _, s := range t.Servers {
		for _, k := range sortedKeys(s.Env) {
			add(redact.FromEnviron([]string{k + "=" + s.Env[k]})...)
		}
		add(redact.FromArgs(s.Command)...)
	}
	add(t.metricsURLSecrets()...)
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
			errs = append(errs, &ShortSecretError{Source: field, Len: len(v)})
		}
	}
	for _, sec := range t.blockSecrets() {
		short(sec.field, sec.value)
	}
	for i, v := range t.SecretValues {
		short(fmt.Sprintf("secrets[%d]", i), v)
	}
	for _, i := range t.SecretArgs {
		if i < 0 || i >= len(t.Command) {
			errs = append(errs, fmt.Errorf("secret_args: %d is not an index of command (0..%d)", i, len(t.Command)-1))
			continue
		}
		short(fmt.Sprintf("command[%d] (secret_args)", i), t.Command[i])
	}
	for _, k := range sortedKeys(t.Env) {
		if slices.Contains(t.SecretEnv, k) || redact.SecretName(k) {
			short("env."+k, t.Env[k])
		}
	}
	for _, v := range redact.FromArgs(t.Command) {
		short("command (a secret flag's value)", v)
	}
	for i, s := range t.Servers {
		for _, k := range sortedKeys(s.Env) {
			if redact.SecretName(k) {
				short(fmt.Sprintf("servers[%d].env.%s", i, k), s.Env[k])
			}
		}
		for _, v := range redact.FromArgs(s.Command) {
			short(fmt.Sprintf("servers[%d].command (a secret flag's value)", i), v)
		}
	}
	for _, v := range t.metricsURLSecrets() {
		short("metrics.url/profile.url (a secret query value or password)", v)
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// OverrideURL makes url the generator's URL for scenario (--url): the
// block's other fields stay, and a scenario whose block is a URL alone
// (echo) gets one when the target has none.
func (t *TargetSpec) OverrideURL(scenario, url string) {
	t.URL = url
	if d, ok := load.Lookup(scenario); ok && d.Target != nil && d.Target.FromURL != nil {
		if _, has := t.Blocks[d.Target.Key]; !has {
			t.SetBlock(d.Target.Key, d.Target.FromURL(url))
		}
	}
}

// ForSweep applies the sweep's knobs that reach into the scenario's block:
// SCENARIO_FILE replaces its file (TargetDef.WithFile), and a block that
// brings a connection ladder (a scenario file's "sweep") sets the ladder
// of every batch the sweep was given none for.
func (t *TargetSpec) ForSweep(o *Plan) error {
	d, ok := load.Lookup(o.Scenario)
	if !ok || d.Target == nil {
		return nil
	}
	if o.ScenarioFile != "" && d.Target.WithFile != nil {
		raw, err := d.Target.WithFile(t.Blocks[d.Target.Key], o.ScenarioFile)
		if err != nil {
			return blockError(d.Target.Key, err)
		}
		t.SetBlock(d.Target.Key, raw)
	}
	blk, err := t.Block(o.Scenario)
	if err != nil {
		return nil // CheckRunnable says so
	}
	lb, ok := blk.(load.LadderBlock)
	if !ok {
		return nil
	}
	l := lb.ConnsLadder(o.Quick)
	if l == nil {
		return nil
	}
	for _, b := range o.BatchLadder {
		if _, given := o.ConnsLadders[b]; !given {
			if o.ConnsLadders == nil {
				o.ConnsLadders = ConnsLadders{}
			}
			o.ConnsLadders[b] = slices.Clone(Ladder(l))
			o.Notes = append(o.Notes, fmt.Sprintf("CONNS_LADDER_%d: %s, the scenario file's", b, Ladder(l).String()))
		}
	}
	return nil
}

// URLFor is the URL the generator is given for a scenario.
func (t TargetSpec) URLFor(scenario string) (string, error) {
	if t.URL != "" {
		if _, err := t.Block(scenario); err != nil {
			return "", err
		}
		return t.URL, nil
	}
	blk, err := t.Block(scenario)
	if err != nil {
		return "", err
	}
	if blk.URL() == "" {
		return "", fmt.Errorf("%s: empty", blk.URLField())
	}
	return blk.URL(), nil
}

// moreURLs are the scenario's URLs after the first, of a block that
// names several servers (load.MultiURLBlock); none when the sweep's --url
// replaced the block's.
func (t TargetSpec) moreURLs(scenario string) []string {
	if t.URL != "" {
		return nil
	}
	blk, err := t.Block(scenario)
	if err != nil {
		return nil
	}
	if m, ok := blk.(load.MultiURLBlock); ok && len(m.URLs()) > 1 {
		return m.URLs()[1:]
	}
	return nil
}

// urlField is the name of the field holding the scenario's URL.
func (t TargetSpec) urlField(scenario string) string {
	if blk, err := t.Block(scenario); err == nil {
		return blk.URLField()
	}
	return blockKey(scenario)
}

// blockKey is the scenario's block key in a target file.
func blockKey(scenario string) string {
	if d, ok := load.Lookup(scenario); ok && d.Target != nil {
		return d.Target.Key
	}
	return scenario
}

// Block is the scenario's parsed block of the target. Errors name the
// block's key.
func (t TargetSpec) Block(scenario string) (load.TargetBlock, error) {
	d, ok := load.Lookup(scenario)
	if !ok {
		return nil, &load.UnknownScenarioError{Name: scenario}
	}
	if d.Target == nil {
		return nil, fmt.Errorf("scenario %s cannot be swept from a target file", scenario)
	}
	if _, ok := t.Blocks[d.Target.Key]; !ok {
		err := fmt.Errorf("%s: the target has no %s block, which scenario %s needs", d.Target.Key, d.Target.Key, scenario)
		var have []string
		for _, key := range sortedKeys(t.Blocks) {
			for _, od := range load.Scenarios() {
				if od.Target != nil && od.Target.Key == key {
					have = append(have, "SCENARIO="+od.Name)
				}
			}
		}
		if len(have) > 0 {
			err = fmt.Errorf("%w (it has blocks for %s)", err, strings.Join(have, ", "))
		}
		return nil, err
	}
	return t.parseBlock(d.Target.Key)
}

// parseBlock parses the block under key with its scenario's parser.
func (t TargetSpec) parseBlock(key string) (load.TargetBlock, error) {
	td := blockDef(key)
	if td == nil {
		return nil, fmt.Errorf("%s: no scenario reads this block", key)
	}
	blk, err := td.Parse(t.Blocks[key])
	if err != nil {
		return nil, blockError(key, err)
	}
	return blk, nil
}

// blockError names a block's error by its path in the target file:
// key.field for a load.FieldError, key: for anything else (a JSON error).
func blockError(key string, err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, blockError(key, e))
		}
		return errors.Join(errs...)
	}
	var fe *load.FieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s.%w", key, fe)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// SetBlock stores raw as the block under key (a scenario's TargetDef.Key).
func (t *TargetSpec) SetBlock(key string, raw json.RawMessage) {
	if t.Blocks == nil {
		t.Blocks = map[string]json.RawMessage{}
	}
	t.Blocks[key] = raw
}

// blockDef is the target definition that reads the block under key.
func blockDef(key string) *load.TargetDef {
	for _, d := range load.Scenarios() {
		if d.Target != nil && d.Target.Key == key {
			return d.Target
		}
	}
	return nil
}

type blockSecret struct{ field, value string }

// blockSecrets are the secrets of every block that parses, by field.
func (t TargetSpec) blockSecrets() []blockSecret {
	var out []blockSecret
	for _, key := range sortedKeys(t.Blocks) {
		blk, err := t.parseBlock(key)
		if err != nil || blk == nil {
			continue
		}
		sec := blk.Secrets()
		for _, f := range sortedKeys(sec) {
			out = append(out, blockSecret{key + "." + f, sec[f]})
		}
	}
	return out
}

// targetFields is TargetSpec without its methods, for encoding.
type targetFields TargetSpec

// harnessKeys are the target file's own keys; every other top-level key
// is a scenario's block.
var harnessKeys = sync.OnceValue(func() map[string]bool { return load.JSONFieldNames(reflect.TypeOf(targetFields{})) })

// UnmarshalJSON reads the harness's fields strictly and keeps each
// scenario block raw. A key that is neither is an error naming it.
func (t *TargetSpec) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	own := map[string]json.RawMessage{}
	var blocks map[string]json.RawMessage
	for _, k := range sortedKeys(all) {
		switch {
		case harnessKeys()[k]:
			own[k] = all[k]
		case blockDef(k) != nil:
			if blocks == nil {
				blocks = map[string]json.RawMessage{}
			}
			var c bytes.Buffer
			if err := json.Compact(&c, all[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			blocks[k] = c.Bytes()
		default:
			return fmt.Errorf("json: unknown field %q (not a target field, and no scenario reads a block of that name)", k)
		}
	}
	ownJSON, err := json.Marshal(own)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(ownJSON))
	dec.DisallowUnknownFields()
	var f targetFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*t = TargetSpec(f)
	t.Blocks = blocks
	return nil
}

// MarshalJSON writes the harness's fields and then every block under its
// key, so a TargetSpec written (target.json in a point's work dir) reads
// back the same.
func (t TargetSpec) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(targetFields(t))
	if err != nil {
		return nil, err
	}
	return load.InlineBlocks(b, t.Blocks), nil
}

// pinnedURL reports whether a URL takes the point's address: without
// {addr} or {port} it names a fixed server ({host} alone is only
// 127.0.0.1), not the one each point boots on its own port.
func pinnedURL(u string) bool {
	return hasPortPlaceholder(u)
}

// portPlaceholder matches {port} and {portN}; {addr} holds {port}.
var portPlaceholder = regexp.MustCompile(`\{port([0-9]*)\}`)

// hasPortPlaceholder reports whether s takes one of the point's ports.
func hasPortPlaceholder(s string) bool {
	return strings.Contains(s, "{addr}") || portPlaceholder.MatchString(s)
}

// Warnings are what the result must say about a target that was allowed
// to run: a URL that does not take the point's address.
func (t TargetSpec) Warnings(scenario string) []string {
	if t.External {
		return nil // meta.target.external says so; the verdict says what it knows of its CPU
	}
	u, err := t.URLFor(scenario)
	if err != nil || pinnedURL(u) {
		return nil
	}
	return []string{fmt.Sprintf("%s %q does not take the point's address ({addr} or {port}), allowed by allow_unpinned_url: the generator drove a server the harness did not boot, pin or sample, so the CPU figures and verdicts are not about the server measured", t.urlField(scenario), u)}
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

// PointAddr is what one point's placeholders are filled from: its free
// loopback port ({port}, {addr}), a second free port for a server that
// listens twice, e.g. a monitoring endpoint ({port2}), further free ports
// {port3}, {port4}, ... for servers that listen more, or several servers
// (Ports: {port3} is Ports[0]), and the point's own fresh directory,
// absolute ({workdir}: state a server keeps, such as a broker's storage,
// starts empty at every point and is kept with the point's logs).
type PointAddr struct {
	// Host is {host} (and {addr}'s host): empty is 127.0.0.1; the agents'
	// bridge address (AgentsLab) or AGENTS_LISTEN's host otherwise.
	Host        string
	Port, Port2 int
	Ports       []int // {port3}, {port4}, ...
	WorkDir     string
}

// MaxPorts is the highest {portN} a target may name.
const MaxPorts = 64

// PortN is {portN}'s port (N >= 1; {port1} is {port}), 0 if the point has
// none.
func (a PointAddr) PortN(n int) int {
	switch {
	case n == 1:
		return a.Port
	case n == 2:
		return a.Port2
	case n >= 3 && n-3 < len(a.Ports):
		return a.Ports[n-3]
	}
	return 0
}

// standIn fills the placeholders where only the syntax is checked.
var standIn = PointAddr{Port: 1, Port2: 2, WorkDir: "/ceiling-point"}

// standInAddr is standIn with every {portN} the target names.
func (t TargetSpec) standInAddr() PointAddr {
	a := standIn
	for n := 3; n <= t.portsUsed() && n <= MaxPorts; n++ {
		a.Ports = append(a.Ports, n)
	}
	return a
}

// portsUsed is the highest N of a {portN} anywhere in the target (2 at
// least: every point has {port} and {port2}).
func (t TargetSpec) portsUsed() int {
	b, err := json.Marshal(t)
	if err != nil {
		return 2
	}
	n := 2
	for _, m := range portPlaceholder.FindAllSubmatch(b, -1) {
		if v, err := strconv.Atoi(string(m[1])); err == nil && v > n {
			n = v
		}
	}
	return n
}

// portsNamed are the N of every {portN} in s ({port} and {addr}: 1).
func portsNamed(s string) []int {
	var out []int
	if strings.Contains(s, "{addr}") {
		out = append(out, 1)
	}
	for _, m := range portPlaceholder.FindAllStringSubmatch(s, -1) {
		n := 1
		if m[1] != "" {
			n, _ = strconv.Atoi(m[1])
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Expand fills the placeholders of one point: {addr}, {host}, {port},
// {port2}, {portN} and {workdir}. A {portN} the point has no port for is
// left as it is.
func Expand(s string, a PointAddr) string {
	p := strconv.Itoa(a.Port)
	host := a.Host
	if host == "" {
		host = "127.0.0.1"
	}
	s = strings.NewReplacer("{addr}", net.JoinHostPort(host, p), "{host}", host, "{workdir}", a.WorkDir).Replace(s)
	return portPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		n := 1
		if d := m[len("{port") : len(m)-1]; d != "" {
			n, _ = strconv.Atoi(d)
		}
		if port := a.PortN(n); port > 0 {
			return strconv.Itoa(port)
		}
		return m
	})
}

// FreePorts returns a point's two free loopback ports, distinct.
func FreePorts() (port, port2 int, err error) {
	ps, err := FreePortsN(2)
	if err != nil {
		return 0, 0, err
	}
	return ps[0], ps[1], nil
}

// FreePortsN returns n distinct free loopback ports: every one is held
// open until all are picked, so the kernel cannot hand out one twice.
func FreePortsN(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
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
// working directory and the command exist (run `make build` for
// bin/refserver), and that the target has an endpoint for the scenario
// that takes the point's address (unless AllowUnpinnedURL).
func (t TargetSpec) CheckRunnable(scenario string) error {
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
		errs = append(errs, fmt.Errorf("%s: %q has no {addr} or {port}, so the generator would drive some other server than the one booted pinned for each point (set \"allow_unpinned_url\": true in the target, or pass --allow-unpinned-url, to run anyway, with a warning in the result)", t.urlField(scenario), u))
	} else if !t.AllowUnpinnedURL {
		for i, u := range t.moreURLs(scenario) {
			if !pinnedURL(u) {
				errs = append(errs, fmt.Errorf("%s: the URL #%d, %q, has no {addr}, {port} or {portN}, so the generator would drive some server the harness did not boot", t.urlField(scenario), i+2, u))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckFor checks the target against the sweep's knobs: a fan-out target
// spreads its subscribers over fanout.channels, so every point needs at
// least that many connections (the generator refuses fewer, after boot).
func (t TargetSpec) CheckFor(o *Options) error {
	if err := t.CheckProfileFor(o); err != nil {
		return err
	}
	blk, err := t.Block(o.Scenario)
	if err != nil {
		return nil // CheckRunnable says so
	}
	for _, b := range o.BatchLadder {
		if l := o.ConnsLadder(b); len(l) > 0 {
			if err := blk.CheckLadder(l[0]); err != nil {
				return fmt.Errorf("%w (CONNS_LADDER_%d)", blockError(blockKey(o.Scenario), err), b)
			}
		}
	}
	return nil
}

// targetMeta is t as the result records it.
func targetMeta(t TargetSpec, scenario string) Target {
	m := Target{Name: t.Name, File: t.File, Command: append([]string{}, t.Command...), // [] not null for a multi-server target
		External: t.External, ExternalCPUs: t.ExternalCPUs}
	m.URL, _ = t.URLFor(scenario)
	for _, s := range t.Servers {
		m.Servers = append(m.Servers, TargetServer{Name: s.Name, Command: append([]string(nil), s.Command...)})
	}
	return m
}
