package harness

import (
	"fmt"
	"os"
	"path/filepath"
)

// pointFiles are one point's paths in the work dir.
type pointFiles struct {
	dir, serverLog, genLog, marker, json string
	// gate is a duet generator's start gate (--start-gate): its
	// FILE.ready says the generator is connected.
	gate string
}

// newPointFiles makes spec's directory in workDir, fresh: whatever an
// earlier run with the same --work-dir left under the same name (a
// load.json, a marker) is removed first, so an old figure can never pass
// for this point's.
func newPointFiles(workDir string, spec PointSpec) (pointFiles, error) {
	k := spec.Key
	dir := filepath.Join(workDir, fmt.Sprintf("point-%03d-%s-b%d-c%d-r%d", spec.Index, spec.Role, k.Batch, k.Connections, k.Rep))
	if err := freshDir(dir); err != nil {
		return pointFiles{}, err
	}
	f := pointFiles{
		dir:       dir,
		serverLog: filepath.Join(dir, "server.log"),
		genLog:    filepath.Join(dir, "generator.log"),
		marker:    filepath.Join(dir, "measure.marker"),
		json:      filepath.Join(dir, "load.json"),
		gate:      filepath.Join(dir, "start.gate"),
	}
	for _, stale := range []string{f.marker, f.json} {
		if _, err := os.Lstat(stale); err == nil {
			return pointFiles{}, fmt.Errorf("%s exists before the point ran", stale)
		}
	}
	return f, nil
}

// freshDir makes dir empty: removed with what it held, then made again.
func freshDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the stale %s: %w", dir, err)
	}
	return os.MkdirAll(dir, 0o755)
}
