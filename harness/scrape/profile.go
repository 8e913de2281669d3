package scrape

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// Profiles: with --profile DIR (PROFILE_DIR) the harness fetches the
// target's "profile" URL over each point's measured window, {seconds}
// being the window in whole seconds, and saves the body as
// DIR/point-<index>-b<batch>-c<conns>-r<rep>.pprof (ProfilePath). A
// failure is recorded on the point (profile_error) and never fails it.

// ProfilePath is where point index's profile is saved under dir.
func ProfilePath(dir string, index int, k result.PointKey) string {
	return filepath.Join(dir, fmt.Sprintf("point-%d-b%d-c%d-r%d.pprof", index, k.Batch, k.Connections, k.Rep))
}

// CheckProfile refuses --profile (dir) for a target without a "profile"
// URL: every point would record the same failure.
func CheckProfile(t target.Spec, dir string) error {
	if dir != "" && (t.Profile == nil || t.Profile.URL == "") {
		return errors.New(`profile: --profile (PROFILE_DIR) is set but the target has no "profile" url to fetch`)
	}
	return nil
}
