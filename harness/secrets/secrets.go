package secrets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/internal/redact"
)

// Gather is every secret a sweep knows, for redaction: the target's
// (target.Spec.Secrets: fan-out secret, marked env entries and literals,
// secret flag values of its command or --server-cmd), the secret flag
// values of the GENERATOR command, and the values of secret-named
// variables of environ (the harness's own environment, which the server
// inherits).
//
// A secret from the target or GENERATOR shorter than redact.MinLen is an
// error (*target.ShortSecretError; the target's are also refused by
// target.Spec.Check): it could not be hidden in a server's log. A short
// value in environ is not the sweep's to fix; it is skipped and a note
// (naming the variable, never the value) says it is not redacted.
func Gather(generator string, t target.Spec, environ []string) (*redact.Set, []string, error) {
	set := redact.New()
	var errs []error
	if err := t.CheckSecrets(); err != nil {
		errs = append(errs, err)
	}
	set.Add(t.Secrets()...)
	for _, v := range redact.FromArgs(strings.Fields(generator)) {
		if len(v) < redact.MinLen {
			errs = append(errs, &target.ShortSecretError{Source: "GENERATOR (a secret flag's value)", Len: len(v)})
		}
		set.Add(v)
	}
	var notes []string
	names := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" || !redact.SecretName(name) {
			continue
		}
		if len(value) < redact.MinLen {
			names[name] = true
			continue
		}
		set.Add(value)
	}
	if len(names) > 0 {
		var l []string
		for n := range names {
			l = append(l, n)
		}
		sort.Strings(l)
		notes = append(notes, fmt.Sprintf("environment variables %s look secret but are shorter than %d characters: they are not redacted from logs", strings.Join(l, ", "), redact.MinLen))
	}
	return set, notes, errors.Join(errs...)
}

// RedactFile rewrites path with every known secret masked, line by line
// (a secret spans no newline), through a temporary file renamed over it; a
// file holding none is left as it was. A missing file is no error.
func RedactFile(path string, s *redact.Set) error {
	if s.Len() == 0 {
		return nil
	}
	in, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := atomicfile.Create(path, "")
	if err != nil {
		return err
	}
	defer tmp.Abort() // a no-op once committed
	w := bufio.NewWriter(tmp)
	rd := bufio.NewReader(in)
	changed := false
	for {
		line, rerr := rd.ReadString('\n')
		if line != "" {
			red := s.String(line)
			changed = changed || red != line
			if _, err := w.WriteString(red); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if err := w.Flush(); err != nil || !changed {
		return err
	}
	perm := os.FileMode(0o600) // CreateTemp's, as before when the mode is unknown
	if fi, err := in.Stat(); err == nil {
		perm = fi.Mode().Perm()
	}
	return tmp.Commit(perm)
}

// writer masks known secrets in each Write: the harness writes its
// progress and table a line per call, so no secret is split across calls.
type writer struct {
	mu sync.Mutex
	w  io.Writer
	s  *redact.Set
}

// NewWriter is w with every secret of s masked in each Write (io.Discard
// for a nil w); it may be written from several goroutines.
func NewWriter(w io.Writer, s *redact.Set) io.Writer {
	if w == nil {
		return io.Discard
	}
	return &writer{w: w, s: s}
}

func (rw *writer) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := io.WriteString(rw.w, rw.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
