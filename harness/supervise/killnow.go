package supervise

import (
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// KillNow ends the grace of a Stop under way: the child's tree is
// SIGKILLed now — through its supervisor where there is one (it alone
// knows the whole tree), then the process group — and the waiting Stop
// sees the exit and sweeps as usual. Escalated then reports true. The
// harness calls it when an interrupt arrives while a stop waits out a
// long stop_grace. Safe on a process that already exited.
func (p *Proc) KillNow() {
	if p.Exited() {
		return
	}
	p.escalated.Store(true)
	if p.supervised {
		_ = signalOne(p.Pid, pinning.SignalKillTree)
		select {
		case <-p.Done():
		case <-time.After(killWait):
		}
	}
	_ = signalGroup(p.Pid, syscall.SIGKILL)
}
