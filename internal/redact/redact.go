// Package redact hides secrets in what the harness writes.
//
// A result is published; a secret must not be. The harness therefore
// gathers every secret it knows before anything boots (the target's
// fan-out secret and the values it marks secret, the values of secret
// flags on the server's and the generator's command lines, secret-named
// environment entries) into one Set, and passes every string it writes —
// command lines, log tails, warnings, reasons, progress, the table, the
// files of its work dir — through Set.String. publish uses Set.Contains to
// refuse a document that still carries one (defence in depth).
//
// Encodings. Each secret is masked in its common other Forms too: base64
// (both alphabets, at any offset, padded or not), hex, URL-encoded, and
// JSON-escaped once or twice.
//
// Short secrets. Redaction is by substring: every occurrence of a secret,
// wherever it stands, becomes Mask. A secret of a few characters cannot be
// hidden that way without destroying ordinary text (a secret "a" would
// mask every letter a), and Contains would find it in any document. The
// Set does not second-guess its caller: it masks what it is given. The
// rule lives with the callers, and MinLen is its threshold: the harness
// refuses to run (exit 2, naming where the secret came from) with a secret
// it was given that is shorter than MinLen. Whole command-line arguments
// that are flag values of a secret flag are masked whole, whatever their
// length (see the harness's redaction of meta.command).
//
// Finding secrets. FromEnviron takes the values of environment variables
// whose names say they are secret (*SECRET*, *TOKEN*, *PASSWORD*,
// *PASSWD*, *API_KEY*, *APIKEY*, *PRIVATE_KEY*, *CREDENTIAL*, any case).
// FromArgs takes the values of flags whose names say so (--secret,
// --token, --app-secret, --api-key, --password, ... in the "--x=V",
// "--x V", "-x=V" and "-x V" forms); a flag naming where a secret is kept
// (a name ending in file, path, dir or env, e.g. --token-file) is not
// itself a secret.
package redact

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/ceiling-bench/ceiling/internal/argv"
)

// Mask replaces every secret.
const Mask = "REDACTED"

// MinLen is the shortest secret that substring redaction can hide without
// destroying ordinary text. See the package comment for the rule.
const MinLen = 8

// Set is a set of secrets; safe for concurrent use. The zero value is an
// empty set.
type Set struct {
	mu      sync.RWMutex
	secrets map[string]struct{}
	r       *strings.Replacer // built lazily, longest secret first
}

// New returns a Set holding secrets (empty strings are ignored).
func New(secrets ...string) *Set {
	s := &Set{}
	s.Add(secrets...)
	return s
}

// Add adds secrets; empty strings are ignored.
func (s *Set) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range secrets {
		if x == "" {
			continue
		}
		if s.secrets == nil {
			s.secrets = map[string]struct{}{}
		}
		if _, ok := s.secrets[x]; !ok {
			s.secrets[x] = struct{}{}
			s.r = nil
		}
	}
}

// sorted is the secrets, longest first (a secret containing another is
// masked whole), then in lexical order for a deterministic result.
func (s *Set) sorted() []string {
	out := make([]string, 0, len(s.secrets))
	for x := range s.secrets {
		out = append(out, x)
	}
	sortLongestFirst(out)
	return out
}

// sortLongestFirst sorts xs longest first, then lexically.
func sortLongestFirst(xs []string) {
	sort.Slice(xs, func(i, j int) bool {
		if len(xs[i]) != len(xs[j]) {
			return len(xs[i]) > len(xs[j])
		}
		return xs[i] < xs[j]
	})
}

func (s *Set) replacer() *strings.Replacer {
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r != nil {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		// Every secret and each of its Forms, longest first: one that
		// holds another is masked whole.
		all := s.sorted()
		for _, x := range s.sorted() {
			all = append(all, Forms(x)...)
		}
		sortLongestFirst(all)
		var pairs []string
		for _, x := range all {
			pairs = append(pairs, x, Mask)
		}
		s.r = strings.NewReplacer(pairs...)
	}
	return s.r
}

// String returns x with every occurrence of every known secret replaced by
// Mask.
func (s *Set) String(x string) string {
	if s == nil || s.Len() == 0 || x == "" {
		return x
	}
	r := s.replacer()
	out := r.Replace(x)
	if !s.inStages(r, out, true) {
		return out
	}
	// A secret left only in a decoded stage (an encoding Forms does not
	// list, or one nested in another) cannot be cut out where it stands:
	// every line that holds one is masked whole.
	lines := strings.SplitAfter(out, "\n")
	masked := false
	for i, l := range lines {
		if s.inStages(r, l, true) {
			lines[i] = Mask + l[len(strings.TrimRight(l, "\r\n")):]
			masked = true
		}
	}
	if !masked { // found only across lines
		return Mask
	}
	return strings.Join(lines, "")
}

// inStages reports whether a secret or one of its Forms is in any of
// text's Stages (canon.go), the text itself left out when decodedOnly.
func (s *Set) inStages(r *strings.Replacer, text string, decodedOnly bool) bool {
	for i, st := range Stages(text) {
		if i == 0 && decodedOnly {
			continue
		}
		if r.Replace(st) != st {
			return true
		}
	}
	return false
}

// Strings is String applied to each element of xs, in a new slice (nil for
// nil).
func (s *Set) Strings(xs []string) []string {
	if xs == nil {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = s.String(x)
	}
	return out
}

// Contains reports whether data holds any known secret, as it is, in
// one of its Forms, or in either after decoding (Stages: JSON escapes,
// percent-encoding, HTML entities, base64, nested up to MaxDepth), so a
// JSON document is checked as well as text. It is the secrets gate:
// publish refuses what it finds (CheckSecrets).
func (s *Set) Contains(data []byte) bool {
	if s == nil || s.Len() == 0 {
		return false
	}
	return s.inStages(s.replacer(), string(data), false)
}

// jsonEscaped is x as encoding/json writes it inside a string, without
// the quotes.
func jsonEscaped(x string) string {
	b, err := json.Marshal(x)
	if err != nil || len(b) < 2 {
		return x
	}
	return string(b[1 : len(b)-1])
}

// Len is the number of distinct secrets.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets)
}

// secretWords are the name parts that mark a variable or flag secret,
// upper case with '_' for '-'.
var secretWords = []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE_KEY", "CREDENTIAL"}

// notSecretSuffixes mark a name that says where a secret is, not what.
var notSecretSuffixes = []string{"FILE", "PATH", "DIR", "ENV"}

// SecretName reports whether a variable or flag name says its value is
// secret (any case, '-' and '_' alike).
func SecretName(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	for _, suf := range notSecretSuffixes {
		if strings.HasSuffix(n, suf) {
			return false
		}
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// FromEnviron returns the non-empty values of the NAME=VALUE entries whose
// name says they are secret (SecretName).
func FromEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && value != "" && SecretName(name) {
			out = append(out, value)
		}
	}
	return out
}

// FromArgs returns the non-empty values of secret flags in argv
// ("--secret=V", "--secret V", one or two dashes; see SecretName). argv[0]
// is looked at too, so a command or its arguments may be passed.
func FromArgs(argv []string) []string {
	var out []string
	forEachSecretValue(argv, func(i int, value string, whole bool) {
		if value != "" {
			out = append(out, value)
		}
	})
	return out
}

// forEachSecretValue calls fn for every secret flag value in argv: the
// index of the element holding it, the value, and whether the element is
// the value alone (whole) or "--flag=value".
func forEachSecretValue(args []string, fn func(i int, value string, whole bool)) {
	for i := 0; i < len(args); i++ {
		name, value, inline, isFlag := argv.Flag(args[i])
		if !isFlag || !SecretName(name) {
			continue
		}
		if inline {
			fn(i, value, false)
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			fn(i+1, args[i+1], true)
			i++
		}
	}
}

// Args returns argv with the value of every secret flag (FromArgs)
// replaced by Mask whole, whatever its length, and every known secret of s
// masked in the other elements. s may be nil.
func (s *Set) Args(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := append([]string(nil), argv...)
	forEachSecretValue(out, func(i int, value string, whole bool) {
		if whole {
			out[i] = Mask
		} else {
			out[i] = out[i][:strings.Index(out[i], "=")+1] + Mask
		}
	})
	if s != nil {
		for i := range out {
			out[i] = s.String(out[i])
		}
	}
	return out
}
