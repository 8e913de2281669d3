package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/redact"
)

// SecretError refuses a document that carries a configured secret: the
// harness redacts every secret it knows from what it writes, and this is
// the second line, so a secret that slipped through (a server that logged
// its config into a log tail, a secret the harness was never told about)
// is not pushed or posted. Paths names every field that holds one; the
// secret itself is never part of the error.
type SecretError struct {
	File  string
	Paths []string // JSON field paths, e.g. meta.command[5], curve[2].log_tail
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("%s: %s: holds a configured secret (from the environment or a --target file); not publishing it: remove it from the document, or find why the harness did not redact it",
		e.File, strings.Join(e.Paths, ", "))
}

// Secrets gathers what publish must never send: the values of this
// process's environment variables whose names say they are secret
// (redact.FromEnviron: GITHUB_TOKEN and the like) and extra values (the
// variable --token-env names, the secrets of the target files, which the
// caller reads: harness.TargetSpec.Secrets). Values shorter than
// redact.MinLen are left out: a variable such as SOME_TOKEN=1 would
// otherwise match any document (a target file with a short secret is
// refused when it is loaded, naming the field).
func Secrets(environ []string, extra []string) *redact.Set {
	set := redact.New()
	for _, v := range append(redact.FromEnviron(environ), extra...) {
		if len(v) >= redact.MinLen {
			set.Add(v)
		}
	}
	return set
}

// EnvironSecrets is Secrets of os.Environ() with no target files.
func EnvironSecrets(extra ...string) *redact.Set {
	return Secrets(os.Environ(), extra)
}

// CheckSecrets returns a *SecretError when raw, the document as read
// (name is its file, for the message), holds any secret of set: in a
// string value or key, as written or JSON-escaped. It names every field
// path where one is found.
func CheckSecrets(raw []byte, name string, set *redact.Set) error {
	if set.Len() == 0 || !set.Contains(raw) {
		return nil
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	paths := map[string]bool{}
	if err := dec.Decode(&doc); err == nil {
		walkSecrets(doc, "", set, paths)
	}
	if len(paths) == 0 {
		// Found in the bytes but in no single value (between fields, or
		// split by an escape): the document as a whole.
		paths["document"] = true
	}
	out := make([]string, 0, len(paths))
	for p := range paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return &SecretError{File: name, Paths: out}
}

func walkSecrets(v any, path string, set *redact.Set, found map[string]bool) {
	at := func(p string) string {
		if p == "" {
			return "document"
		}
		return p
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if set.Contains([]byte(k)) {
				found[at(path)+" (a key)"] = true
			}
			walkSecrets(e, p, set, found)
		}
	case []any:
		for i, e := range x {
			walkSecrets(e, path+"["+strconv.Itoa(i)+"]", set, found)
		}
	case string:
		if set.Contains([]byte(x)) {
			found[at(path)] = true
		}
	case json.Number:
		if set.Contains([]byte(x.String())) {
			found[at(path)] = true
		}
	}
}
