package harness

import (
	"fmt"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/target"
)

// portGiver gives a point whose servers it boots (or probes) its
// addresses: its free ports, the host its generator reaches them on, and
// its {workdir}.
type portGiver struct {
	free func(n int) ([]int, error) // ProcOptions.FreePorts
	host string                     // {host}: procEnv's
}

// addr is the placeholders of t's servers in dir: the ports they use
// (two at least), and {workdir}, a directory of the server's own inside
// dir when it runs as another user (as): the point's directory holds the
// generator's evidence (the marker, load.json), which such a server gets
// no write to.
func (g portGiver) addr(t target.Spec, dir string, as *runas.User) (target.Addr, error) {
	ports, err := g.free(max(2, t.PortsUsed()))
	if err != nil {
		return target.Addr{}, err
	}
	a := target.Addr{Port: ports[0], Port2: ports[1], Ports: ports[2:], Host: g.host}
	if a.WorkDir, err = filepath.Abs(dir); err != nil {
		return target.Addr{}, fmt.Errorf("work dir: %v", err)
	}
	if as != nil {
		if a.WorkDir, err = as.StateDir(a.WorkDir); err != nil {
			return target.Addr{}, fmt.Errorf("work dir: %v", err)
		}
	}
	return a, nil
}
