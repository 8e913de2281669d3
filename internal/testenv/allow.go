package testenv

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// PureStd is the standard library a package that decides (from what
// points measured, or from the knobs) may link: what fmt, encoding/json,
// time and the sorting helpers bring, and nothing that starts a process
// or talks to a network (os/exec, net, net/http, crypto/tls). os and
// syscall are in it because fmt links them, path/filepath because the
// result names its files. A package's allowlist adds
// to it what it needs beyond that, by name (ImportsOnly).
var PureStd = []string{
	"bytes", "cmp", "encoding", "encoding/base64", "encoding/hex", "encoding/json", "errors", "fmt",
	"io", "io/fs", "iter", "maps", "math", "math/bits", "math/rand/v2", "net/netip", "net/url", "os",
	"path", "path/filepath", "reflect", "runtime", "slices", "sort", "strconv", "strings", "sync", "sync/atomic", "syscall",
	"text/tabwriter", "time", "unicode", "unicode/utf16", "unicode/utf8", "unique", "unsafe", "weak",
}

// ImportsOnly fails t for every package that pkg (an import path) links,
// by `go list -deps`, that it is not allowed to: a package of the
// standard library outside PureStd and allowed, or any other package not
// in allowed (import paths, each exact; pkg itself is allowed). The
// standard library's internal packages come with the public ones that
// link them. An allowlist: a new import anywhere below pkg fails here
// until its test says the package may link it.
func ImportsOnly(t testing.TB, pkg string, allowed ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.Standard}} {{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list -deps %s gave %d packages: %q", pkg, len(lines), lines)
	}
	for _, l := range lines {
		std, path, _ := strings.Cut(l, " ")
		switch {
		case path == pkg, slices.Contains(allowed, path):
		case std == "true" && (slices.Contains(PureStd, path) || stdInternal(path)):
		default:
			t.Errorf("%s links %s, which its allowlist does not name", pkg, path)
		}
	}
}

// stdInternal: a standard-library package no program imports itself
// (internal/..., vendor/..., a package's own internal/ below it).
func stdInternal(path string) bool {
	return strings.HasPrefix(path, "internal/") || strings.HasPrefix(path, "vendor/") ||
		strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}
