package supervise

import (
	"os/exec"
	"syscall"
)

func setNewNetNS(cmd *exec.Cmd) error {
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	return nil
}
