package harness

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/harness/target"
)

// Profiles: with --profile DIR (PROFILE_DIR) the harness fetches the
// target's "profile" URL over each point's measured window, {seconds}
// being the window in whole seconds, and saves the body as
// DIR/point-<index>-b<batch>-c<conns>-r<rep>.pprof (ProfilePath). A
// failure is recorded on the point (profile_error) and never fails it.

// ProfilePath is where a point's profile is saved under dir.
func ProfilePath(dir string, spec PointSpec) string {
	k := spec.Key
	return filepath.Join(dir, fmt.Sprintf("point-%d-b%d-c%d-r%d.pprof", spec.Index, k.Batch, k.Connections, k.Rep))
}

// checkProfileFor refuses --profile for a target without a "profile"
// URL: every point would record the same failure.
func checkProfileFor(t target.Spec, profileDir string) error {
	if profileDir != "" && (t.Profile == nil || t.Profile.URL == "") {
		return errors.New(`profile: --profile (PROFILE_DIR) is set but the target has no "profile" url to fetch`)
	}
	return nil
}
