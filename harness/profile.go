package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/atomicfile"
)

// Profiles: with --profile DIR (PROFILE_DIR) the harness fetches the
// target's "profile" URL over each point's measured window, {seconds}
// being the window in whole seconds, and saves the body as
// DIR/point-<index>-b<batch>-c<conns>-r<rep>.pprof (ProfilePath). A
// failure is recorded on the point (profile_error) and never fails it.

// Bounds of one profile fetch: its body, and how long past {seconds} the
// server may take to answer.
const (
	MaxProfileBytes = 64 << 20
	ProfileSlack    = 10 * time.Second
)

// ProfilePath is where a point's profile is saved under dir.
func ProfilePath(dir string, spec PointSpec) string {
	k := spec.Key
	return filepath.Join(dir, fmt.Sprintf("point-%d-b%d-c%d-r%d.pprof", spec.Index, k.Batch, k.Connections, k.Rep))
}

// checkProfileFor refuses --profile for a target without a "profile"
// URL: every point would record the same failure.
func checkProfileFor(t target.Spec, o *knob.Options) error {
	if o.ProfileDir != "" && (t.Profile == nil || t.Profile.URL == "") {
		return errors.New(`profile: --profile (PROFILE_DIR) is set but the target has no "profile" url to fetch`)
	}
	return nil
}

// fetchProfile GETs rawURL and saves its body at path, through a
// temporary file renamed into place; whatever an earlier run left at path
// is removed first, so a failed fetch never leaves an old profile that
// looks like this point's.
func fetchProfile(ctx context.Context, client *http.Client, rawURL, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--profile %s: %w", dir, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale %s: %w", path, err)
	}
	resp, err := httpGet(ctx, client, rawURL, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tmp, err := atomicfile.Create(path, "")
	if err != nil {
		return fmt.Errorf("--profile %s: %w", dir, err)
	}
	defer tmp.Abort() // a no-op once committed
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, MaxProfileBytes+1))
	switch {
	case err != nil:
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return fmt.Errorf("GET %s: body timed out after %s", target.SafeURL(rawURL), client.Timeout)
		}
		return fmt.Errorf("GET %s: read the body: %v", target.SafeURL(rawURL), err)
	case n > MaxProfileBytes:
		return fmt.Errorf("GET %s: the profile is larger than %d bytes", target.SafeURL(rawURL), MaxProfileBytes)
	case n == 0:
		return fmt.Errorf("GET %s: empty body", target.SafeURL(rawURL))
	}
	return tmp.Commit(0o600) // CreateTemp's mode, as the profile always had
}
