package kube

import (
	"fmt"
	"strings"
	"time"
)

// APIError is a request to the API server that failed: the operation, the
// object, and how many retries ran before it gave up (0 when the error was
// not one worth retrying, e.g. a 403 or an object that already exists).
type APIError struct {
	Op        string // create, delete, list, watch, logs
	Kind      string
	Namespace string
	Name      string // "" for a list or a watch
	Retries   int
	Err       error
}

func (e *APIError) Error() string {
	obj := e.Kind
	if e.Name != "" {
		obj += " " + e.Namespace + "/" + e.Name
	} else {
		obj += " in " + e.Namespace
	}
	s := fmt.Sprintf("%s %s: %v", e.Op, obj, e.Err)
	if e.Retries > 0 {
		s += fmt.Sprintf(" (gave up after %d retries)", e.Retries)
	}
	return s
}

func (e *APIError) Unwrap() error { return e.Err }

// PodError is a pod that will not run: an image that cannot be pulled, a
// container that exited non-zero, a crash loop.
type PodError struct {
	Pod       string
	Index     string // the agent's JOB_COMPLETION_INDEX; "" for the coordinator
	Container string
	Reason    string // ImagePullBackOff, Error, OOMKilled, ...
	ExitCode  *int32 // set when a container terminated
	Message   string
}

func (e *PodError) Error() string {
	var b strings.Builder
	b.WriteString("pod " + e.Pod)
	if e.Index != "" {
		b.WriteString(" (agent " + e.Index + ")")
	}
	b.WriteString(": ")
	if e.ExitCode != nil {
		fmt.Fprintf(&b, "container %s exited with code %d", e.Container, *e.ExitCode)
		if e.Reason != "" {
			b.WriteString(" (" + e.Reason + ")")
		}
	} else {
		b.WriteString(e.Reason)
		if e.Container != "" {
			b.WriteString(" (container " + e.Container + ")")
		}
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// PodState is one pod's state when a wait ended: "Running", or why not.
type PodState struct {
	Pod   string
	Index string
	State string // e.g. "Pending: Unschedulable: 0/3 nodes are available: ..."
}

func (s PodState) String() string {
	if s.Index != "" {
		return fmt.Sprintf("pod %s (agent %s): %s", s.Pod, s.Index, s.State)
	}
	return fmt.Sprintf("pod %s: %s", s.Pod, s.State)
}

// DeadlineError is a wait that ran out of time: what it waited for, how
// far it got, and each pod that was not there yet, with why.
type DeadlineError struct {
	After   time.Duration
	Waiting string // "the coordinator and 3 agents Running"
	Missing int    // agent pods the Job controller had not created yet
	Pods    []PodState
}

func (e *DeadlineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "after %v, still waiting for %s", e.After, e.Waiting)
	if e.Missing > 0 {
		fmt.Fprintf(&b, "; %d agent pod(s) not created yet (kubectl describe job %s)", e.Missing, JobName)
	}
	for _, p := range e.Pods {
		b.WriteString("; " + p.String())
	}
	return b.String()
}
