package target

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/ceiling-bench/ceiling/internal/redact"
)

// Secrets is every secret the target holds, to be redacted from all the
// harness writes: fanout.secret, the literal "secrets", the command
// arguments "secret_args" points at, the values of the
// env entries "secret_env" names, env entries whose names say they are
// secret (redact.FromEnviron) and secret flag values of command
// (redact.FromArgs). Placeholders are not filled in: a secret is taken as
// written.
func (t Spec) Secrets() []string {
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
func (t Spec) CheckSecrets() error {
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

type blockSecret struct{ field, value string }

// blockSecrets are the secrets of every block that parses, by field.
func (t Spec) blockSecrets() []blockSecret {
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

// ShortSecretError is a secret the harness was given that is too short to
// redact from free text (redact.MinLen): the sweep refuses to run.
type ShortSecretError struct {
	Source string // the knob, field or variable it came from
	Len    int
}

func (e *ShortSecretError) Error() string {
	return fmt.Sprintf("%s: a secret of %d characters is too short to redact from logs (at least %d): use a longer one",
		e.Source, e.Len, redact.MinLen)
}
