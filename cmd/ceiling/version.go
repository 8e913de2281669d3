package main

import (
	"runtime/debug"
	"strings"
)

// version is set with -ldflags "-X main.version=..." (make build: git
// describe). Left at "dev", `ceiling version` and the results' meta take
// it from the build info instead (buildVersion).
var version = "dev"

// commit is the full commit the binary was built from, set with -ldflags
// "-X main.commit=..." (make build: git rev-parse HEAD), for a build that
// stamps no VCS information (-buildvcs=false): `ceiling init` pins the
// action to it.
var commit = ""

// buildVersion is the version this binary reports: the one the build set
// with -ldflags when it set one; else the module's version from the build
// info, which `go install …@v0.x.y` records, followed by the VCS revision
// and "-dirty" when the binary was built in a checkout that had changes.
// A binary that knows none of these says "dev".
func buildVersion(ldflags string, bi *debug.BuildInfo, ok bool) string {
	if ldflags != "dev" && ldflags != "" || !ok || bi == nil {
		return ldflags
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	rev, dirty := vcsRevision(bi)
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if strings.Contains(v, rev) {
		// A pseudo-version already names the revision (and, since Go
		// 1.24, "+dirty" for a checkout with changes).
		return v
	}
	if dirty {
		rev += "-dirty"
	}
	return v + " (" + rev + ")"
}

// vcsRevision is the commit the build info records (vcs.revision, "" for
// none) and whether the checkout had changes (vcs.modified).
func vcsRevision(bi *debug.BuildInfo) (rev string, dirty bool) {
	if bi == nil {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

func init() {
	bi, ok := debug.ReadBuildInfo()
	version = buildVersion(version, bi, ok)
}
