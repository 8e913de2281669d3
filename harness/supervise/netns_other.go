//go:build !linux

package supervise

import (
	"errors"
	"os/exec"
)

func setNewNetNS(*exec.Cmd) error { return errors.New("network namespaces need Linux") }
