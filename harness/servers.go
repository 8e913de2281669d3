package harness

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/fault"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
)

// serverSet is a point's servers as they came up: the target as it
// booted them, in order (one, named "server", unless the target lists
// servers), their processes (none for an external server), the
// addresses their placeholders were expanded with, and the directory
// their logs are in (the point's, or a warm arm's).
type serverSet struct {
	target target.Spec
	booted []target.Server
	procs  []supervise.Process
	addr   target.Addr
	logDir string
}

// label names server i in messages: "server" for a one-server target,
// "server NAME" for one of several.
func (s *serverSet) label(i int) string {
	if !s.target.Multi() {
		return "server"
	}
	return "server " + s.booted[i].Name
}

// readyField is server i's ready probe's field in the target file.
func (s *serverSet) readyField(i int) string {
	if !s.target.Multi() {
		return "ready"
	}
	return fmt.Sprintf("servers[%d].ready", i)
}

// logPath is server i's log: server.log, or server-NAME.log for one of
// several.
func (s *serverSet) logPath(i int) string {
	if !s.target.Multi() {
		return filepath.Join(s.logDir, "server.log")
	}
	return filepath.Join(s.logDir, "server-"+s.booted[i].Name+".log")
}

// exited is the first server that has exited, if any, but for those
// skip says are not to be counted (a FAULT's, once signalled).
func (s *serverSet) exited(skip func(i int) bool) (int, bool) {
	for i, p := range s.procs {
		if p.Exited() && !skip(i) {
			return i, true
		}
	}
	return 0, false
}

// done is closed when the first server exits, but for those skip names
// (the one a FAULT stops: its exit is the fault's, not the window's end).
func (s *serverSet) done(skip func(i int) bool) <-chan struct{} {
	var chs []<-chan struct{}
	for i, p := range s.procs {
		if !skip(i) {
			chs = append(chs, p.Done())
		}
	}
	return firstDone(chs...)
}

// trees are the servers' process trees, as the CPU is sampled: each
// from its supervisor, whose forks and the program's are below it.
func (s *serverSet) trees() []cpusample.Source {
	var out []cpusample.Source
	for _, p := range s.procs {
		out = append(out, cpusample.Tree(p.Pid()))
	}
	return out
}

// programs are the servers' programs' trees, without the supervisors
// (programPid): as their memory is read.
func (s *serverSet) programs() []cpusample.Source {
	var out []cpusample.Source
	for _, p := range s.procs {
		out = append(out, cpusample.Tree(programPid(p)))
	}
	return out
}

// names are the booted servers' names, in order.
func (s *serverSet) names() []string {
	names := make([]string, len(s.booted))
	for i, b := range s.booted {
		names[i] = b.Name
	}
	return names
}

// cluster is the target as it booted, as package fault reads it.
func (s *serverSet) cluster(scenario string) fault.Cluster {
	return fault.Cluster{Target: s.target, Scenario: scenario, Booted: s.booted}
}

// programPid is the program a process runs, without the supervisor the
// harness put above it: the supervisor is the harness's, and its pages
// (this binary's, shared with every other supervisor) would move the
// server's PSS as generators come and go.
func programPid(s supervise.Process) int {
	if t, ok := s.(interface{ TargetPid() int }); ok {
		return t.TargetPid()
	}
	return s.Pid()
}

// firstDone is closed when the first of chs is.
func firstDone(chs ...<-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	for _, c := range chs {
		go func() {
			<-c
			once.Do(func() { close(done) })
		}()
	}
	return done
}
