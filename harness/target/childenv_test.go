package target

import (
	"slices"
	"testing"
)

// TestChildEnviron: a server gets what any program needs, LC_*, and the
// names its pass_env lists; the generator also Go's and ceiling's own;
// neither ever gets a variable of the runner's, even when listed.
func TestChildEnviron(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOMAXPROCS=2", "CEILING_TEST=1",
		"LICENSE=abc", "GITHUB_TOKEN=secret", "ACTIONS_RUNTIME_TOKEN=secret", "OTHER=x", "malformed"}
	pass := []string{"LICENSE", "GITHUB_TOKEN"}
	for _, tt := range []struct {
		name     string
		prefixes []string
		want     []string
	}{
		{"server", nil, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "LICENSE=abc"}},
		{"generator", GeneratorEnvPrefixes, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOMAXPROCS=2", "CEILING_TEST=1", "LICENSE=abc"}},
	} {
		if got := ChildEnviron(environ, pass, tt.prefixes); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := ChildEnviron(nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("empty environ: %#v, want an empty, non-nil list (nil would inherit ours)", got)
	}
}
