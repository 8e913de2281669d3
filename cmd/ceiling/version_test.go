package main

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion: the -ldflags version wins; else the module version
// (go install …@v0.x.y), with the revision and -dirty of a checkout
// build; a pseudo-version is not given its revision twice.
func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"ldflags", "v0.3.0-4-gabc", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0-4-gabc"},
		{"go install", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		{"checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dev (0123456789ab)"},
		{"dirty checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "dev (0123456789ab-dirty)"},
		{"pseudo-version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201170000-0123456789ab"}, Settings: vcs(rev, "false")}, "v0.0.0-20261201170000-0123456789ab"},
		{"stamped checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201170000-0123456789ab+dirty"}, Settings: vcs(rev, "true")}, "v0.0.0-20261201170000-0123456789ab+dirty"},
		{"no build info", "dev", nil, "dev"},
	} {
		if got := buildVersion(tt.ldflags, tt.bi, tt.bi != nil); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
