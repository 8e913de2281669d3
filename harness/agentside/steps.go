package agentside

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/verdict"
)

// What the point's pipeline asks of its agents after Start (side.Generator).
// A reason of "" is no failure; the process returned with a reason is the
// one whose log tail explains it (nil: none).

var _ side.Generator = (*Run)(nil)

// Bounds: the window may take every agent's joining and readiness after
// the warm-up; the coordinator's results, ExitTimeout and a margin after
// the window. The agents' trees are sampled at the same instants, as
// one side.
func (r *Run) Bounds() side.Bounds {
	return side.Bounds{Window: max(r.pt.ConnectTimeout, r.pt.JoinTimeout+5*time.Second), End: r.pt.ExitTimeout + 5*time.Second, Group: true}
}

// Why says why the agents failed at step.
func (r *Run) Why(step side.Step, wait time.Duration, err error) (string, supervise.Process) {
	switch step {
	case side.Unready:
		return r.unready()
	case side.Overdue:
		return fmt.Sprintf("the coordinator created no measure marker within warm-up + %s", wait), nil
	case side.StillRunning:
		return fmt.Sprintf("coordinator still waiting %s after the window", wait), nil
	}
	return fmt.Sprintf("merged result: %v", err), nil
}

// exitText is a child's exit for a reason: its error, or "exit status 0".
func exitText(pr supervise.Process) string {
	if err := pr.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// unready says why no window will come, or "" while it still may: the
// coordinator's failure, which names the agent, or an agent's exit.
func (r *Run) unready() (string, supervise.Process) {
	select {
	case <-r.done:
		if r.err != nil {
			return fmt.Sprintf("before the measured window: %v", r.err), r.agentNamed(r.err.Error())
		}
	default:
	}
	if i, ok := r.exitedAgent(); ok {
		// The coordinator sees the lost session and says which; give it
		// a moment so the reason is its.
		select {
		case <-r.done:
			if r.err != nil {
				return fmt.Sprintf("before the measured window: %v", r.err), r.agentNamed(r.err.Error())
			}
		case <-time.After(2 * time.Second):
		}
		return fmt.Sprintf("agent %d exited before the measured window (%s)", i, exitText(r.procs[i])), r.procs[i]
	}
	return "", nil
}

// exitedAgent is the first agent process that has exited, if any.
func (r *Run) exitedAgent() (int, bool) {
	done := make([]<-chan struct{}, len(r.procs))
	for i, a := range r.procs {
		done[i] = a.Done()
	}
	return firstClosed(done)
}

// firstClosed is the first of done that is closed, if any.
func firstClosed(done []<-chan struct{}) (int, bool) {
	for i, d := range done {
		select {
		case <-d:
			return i, true
		default:
		}
	}
	return 0, false
}

// agentNamed is the agent process a reason names first ("agent 2"), for
// its log tail.
func (r *Run) agentNamed(reason string) supervise.Process {
	for i, a := range r.procs {
		if strings.Contains(reason, fmt.Sprintf("agent %d ", i)) || strings.Contains(reason, fmt.Sprintf("agent %d:", i)) {
			return a
		}
	}
	return nil
}

// Done is closed when the coordinator returned: the merge done, or its
// failure.
func (r *Run) Done() <-chan struct{} { return r.done }

// network is how the agents reached the server, for the result.
func (r *Run) network() string {
	switch {
	case r.pt.Listen != "":
		return "remote"
	case r.pt.Env.Lab != nil:
		return "netns"
	}
	return "loopback"
}

// Ended gives out the agents' reports and says whether the coordinator
// failed: its reason names the agent. The agents' exits are the
// coordinator's to judge.
func (r *Run) Ended(out *verdict.Outcome) (string, supervise.Process) {
	if r.out != nil {
		out.Agents = r.out.Agents
		network := r.network()
		for i := range out.Agents {
			out.Agents[i].Network = network
		}
	}
	// A late start with every result merged is the verdict's to judge
	// (verdict.Point judges each agent): a starved agent, or a clock that
	// was off.
	var late *agents.LateStartError
	if r.err != nil && !errors.As(r.err, &late) {
		return r.err.Error(), r.agentNamed(r.err.Error())
	}
	return "", nil
}
