package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Retry defaults for transient API errors.
const (
	DefaultRetries = 3
	DefaultBackoff = time.Second      // doubled on each retry
	DefaultMaxWait = 30 * time.Second // longest single wait
	// CleanupTimeout bounds Cleanup, which runs on a context of its own.
	CleanupTimeout = time.Minute
)

// Runner submits, watches and removes one set of Objects.
type Runner struct {
	Client    kubernetes.Interface
	Namespace string // where everything goes; "" is "default"

	Retries int           // retries of a transient error; default DefaultRetries
	Backoff time.Duration // first wait; default DefaultBackoff
	MaxWait time.Duration // default DefaultMaxWait
	// Sleep waits d or until ctx ends; tests record the waits instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Log gets one line per step and per pod state change; may be nil.
	Log io.Writer
}

func (r *Runner) ns() string {
	if r.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return r.Namespace
}

func (r *Runner) logf(format string, a ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, "k8s: "+format+"\n", a...)
	}
}

// transient says whether a retry may help: throttling, a server timeout,
// an unavailable or failing API server.
func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}

// call runs one request, retrying transient errors a bounded number of
// times (a 429's Retry-After when it has one); every error it returns is
// an *APIError.
func (r *Runner) call(ctx context.Context, op, kind, name string, fn func(context.Context) error) error {
	retries, backoff, maxWait, sleep := r.Retries, r.Backoff, r.MaxWait, r.Sleep
	if retries == 0 {
		retries = DefaultRetries
	}
	if backoff == 0 {
		backoff = DefaultBackoff
	}
	if maxWait == 0 {
		maxWait = DefaultMaxWait
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	wait := backoff
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		ae := &APIError{Op: op, Kind: kind, Namespace: r.ns(), Name: name, Err: err}
		if !transient(err) || ctx.Err() != nil {
			return ae
		}
		if attempt >= retries {
			ae.Retries = attempt
			return ae
		}
		d := wait
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			d = time.Duration(s) * time.Second
		}
		d = min(d, maxWait)
		r.logf("%s %s %s: %v; retrying in %v", op, kind, name, err, d)
		if err := sleep(ctx, d); err != nil {
			ae.Retries = attempt
			return ae
		}
		wait = min(2*wait, maxWait)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Submit creates the objects in List's order: the target's ConfigMap, the
// server's Service and pod, the coordinator's Service and pod, the Job (so
// each name exists before a pod dials it). An object that already exists
// is an error: a run left over, for `ceiling k8s delete`.
func (r *Runner) Submit(ctx context.Context, o Objects) error {
	ns := r.ns()
	for _, obj := range o.List() {
		kind, name := kindName(obj)
		err := r.call(ctx, "create", kind, name, func(ctx context.Context) error {
			var err error
			switch obj := obj.(type) {
			case *corev1.Secret:
				if obj.StringData[TokenKey] == "" {
					return fmt.Errorf("no token to put in it")
				}
				_, err = r.Client.CoreV1().Secrets(ns).Create(ctx, obj, metav1.CreateOptions{})
			case *networkingv1.NetworkPolicy:
				_, err = r.Client.NetworkingV1().NetworkPolicies(ns).Create(ctx, obj, metav1.CreateOptions{})
			case *corev1.ConfigMap:
				_, err = r.Client.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{})
			case *corev1.Service:
				_, err = r.Client.CoreV1().Services(ns).Create(ctx, obj, metav1.CreateOptions{})
			case *corev1.Pod:
				_, err = r.Client.CoreV1().Pods(ns).Create(ctx, obj, metav1.CreateOptions{})
			case *batchv1.Job:
				_, err = r.Client.BatchV1().Jobs(ns).Create(ctx, obj, metav1.CreateOptions{})
			}
			return err
		})
		if err != nil {
			return err
		}
		r.logf("created %s %s/%s", kind, ns, name)
	}
	return nil
}

func kindName(obj any) (string, string) {
	switch obj := obj.(type) {
	case *corev1.Secret:
		return "Secret", obj.Name
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy", obj.Name
	case *corev1.ConfigMap:
		return "ConfigMap", obj.Name
	case *corev1.Service:
		return "Service", obj.Name
	case *corev1.Pod:
		return "Pod", obj.Name
	case *batchv1.Job:
		return "Job", obj.Name
	}
	panic(fmt.Sprintf("kube: no kind for %T", obj))
}

// Cleanup deletes everything, the Job first (its pods with it: propagation
// Background), in the reverse of List's order. It runs on a context of its
// own, bounded by CleanupTimeout, so that it still works after the caller's
// was cancelled. Objects already gone are not an error.
func (r *Runner) Cleanup(o Objects) error {
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	ns := r.ns()
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	var errs []error
	objs := o.List()
	slices.Reverse(objs)
	for _, obj := range objs {
		kind, name := kindName(obj)
		err := r.call(ctx, "delete", kind, name, func(ctx context.Context) error {
			switch obj.(type) {
			case *corev1.Secret:
				return r.Client.CoreV1().Secrets(ns).Delete(ctx, name, opts)
			case *networkingv1.NetworkPolicy:
				return r.Client.NetworkingV1().NetworkPolicies(ns).Delete(ctx, name, opts)
			case *corev1.ConfigMap:
				return r.Client.CoreV1().ConfigMaps(ns).Delete(ctx, name, opts)
			case *corev1.Service:
				return r.Client.CoreV1().Services(ns).Delete(ctx, name, opts)
			case *corev1.Pod:
				return r.Client.CoreV1().Pods(ns).Delete(ctx, name, opts)
			default:
				return r.Client.BatchV1().Jobs(ns).Delete(ctx, name, opts)
			}
		})
		switch {
		case err == nil:
			r.logf("deleted %s %s/%s", kind, ns, name)
		case !apierrors.IsNotFound(err):
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WaitRunning watches the pods until the server and the coordinator (when
// they are in the cluster) and N agents are Running, a pod fails (*PodError), timeout passes
// (*DeadlineError) or ctx ends (its error).
func (r *Runner) WaitRunning(ctx context.Context, o Objects, timeout time.Duration) error {
	n := int(*o.Job.Spec.Completions)
	what := fmt.Sprintf("%d agents Running", n)
	if len(o.Pods()) > 0 {
		what = "the server, the coordinator and " + what
	}
	return r.watchPods(ctx, timeout, what, func(pods []*corev1.Pod) (bool, error) {
		agents, single := 0, 0
		for _, p := range pods {
			st := state(p)
			if st.fatal != nil {
				return false, st.fatal
			}
			if !st.running && !st.succeeded {
				continue
			}
			if p.Labels[ComponentLabel] == ComponentAgent {
				agents++
			} else if slices.ContainsFunc(o.Pods(), func(q *corev1.Pod) bool { return q.Name == p.Name }) {
				single++
			}
		}
		return single == len(o.Pods()) && agents >= n, nil
	}, n)
}

// WaitDone watches until the run is over: the coordinator pod ended (its
// failure is a *PodError), or without one every agent succeeded (any agent
// failing is a *PodError naming it).
func (r *Runner) WaitDone(ctx context.Context, o Objects, timeout time.Duration) error {
	n := int(*o.Job.Spec.Completions)
	what := fmt.Sprintf("%d agents to finish", n)
	if o.Coordinator != nil {
		what = "the coordinator to finish"
	}
	return r.watchPods(ctx, timeout, what, func(pods []*corev1.Pod) (bool, error) {
		done := 0
		for _, p := range pods {
			coord := o.Coordinator != nil && p.Name == o.Coordinator.Name
			if o.Coordinator != nil && !coord {
				continue // the coordinator judges its agents
			}
			st := state(p)
			if st.fatal != nil {
				return false, st.fatal
			}
			if st.succeeded {
				if coord {
					return true, nil
				}
				done++
			}
		}
		return o.Coordinator == nil && done >= n, nil
	}, n)
}

// Logs copies the coordinator's log (the sweep's report) to w.
func (r *Runner) Logs(ctx context.Context, pod string, w io.Writer) error {
	return r.call(ctx, "logs", "Pod", pod, func(ctx context.Context) error {
		rc, err := r.Client.CoreV1().Pods(r.ns()).GetLogs(pod, &corev1.PodLogOptions{}).Stream(ctx)
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(w, rc)
		return err
	})
}

// watchPods lists the ceiling pods, then watches from the list's
// resourceVersion, calling done with every pod after each change. A watch
// that ends (the API server closes them after a while) or reports an error
// is followed by a new list, after the backoff.
func (r *Runner) watchPods(ctx context.Context, timeout time.Duration, what string,
	done func([]*corev1.Pod) (bool, error), agents int) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ns := r.ns()
	sel := metav1.ListOptions{LabelSelector: AppLabel + "=" + App}
	pods := map[string]*corev1.Pod{}
	last := map[string]string{}
	check := func() (bool, error) {
		l := make([]*corev1.Pod, 0, len(pods))
		for _, p := range pods {
			l = append(l, p)
		}
		slices.SortFunc(l, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		for _, p := range l {
			if s := state(p).text; last[p.Name] != s {
				last[p.Name] = s
				r.logf("%s", PodState{p.Name, index(p), s})
			}
		}
		return done(l)
	}
	expired := func() error {
		if err := parent.Err(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		de := &DeadlineError{After: timeout, Waiting: what}
		seen := 0
		names := make([]string, 0, len(pods))
		for name, p := range pods {
			names = append(names, name)
			if p.Labels[ComponentLabel] == ComponentAgent {
				seen++
			}
		}
		slices.Sort(names)
		for _, name := range names {
			p := pods[name]
			if st := state(p); !st.running && !st.succeeded {
				de.Pods = append(de.Pods, PodState{name, index(p), st.text})
			}
		}
		de.Missing = max(agents-seen, 0)
		return de
	}
	for {
		var list *corev1.PodList
		err := r.call(ctx, "list", "Pod", "", func(ctx context.Context) error {
			var err error
			list, err = r.Client.CoreV1().Pods(ns).List(ctx, sel)
			return err
		})
		if ctx.Err() != nil {
			return expired()
		}
		if err != nil {
			return err
		}
		clear(pods)
		for i := range list.Items {
			pods[list.Items[i].Name] = &list.Items[i]
		}
		if ok, err := check(); ok || err != nil {
			return err
		}
		var w watch.Interface
		opts := sel
		opts.ResourceVersion = list.ResourceVersion
		err = r.call(ctx, "watch", "Pod", "", func(ctx context.Context) error {
			var err error
			w, err = r.Client.CoreV1().Pods(ns).Watch(ctx, opts)
			return err
		})
		if ctx.Err() != nil {
			return expired()
		}
		if err != nil {
			return err
		}
		ok, err := r.follow(ctx, w, pods, check)
		w.Stop()
		if ok || err != nil {
			return err
		}
		if ctx.Err() != nil {
			return expired()
		}
		// The watch ended: list again after a pause.
		_ = r.sleep(ctx, r.backoff())
	}
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

func (r *Runner) backoff() time.Duration {
	if r.Backoff > 0 {
		return r.Backoff
	}
	return DefaultBackoff
}

// follow applies a watch's events until done says so, the watch ends
// (false, nil) or ctx ends.
func (r *Runner) follow(ctx context.Context, w watch.Interface, pods map[string]*corev1.Pod,
	check func() (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case ev, open := <-w.ResultChan():
			if !open {
				return false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					pods[p.Name] = p
				}
			case watch.Deleted:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					delete(pods, p.Name)
				}
			case watch.Error:
				r.logf("watch: %v", apierrors.FromObject(ev.Object))
				return false, nil
			default:
				continue
			}
			if ok, err := check(); ok || err != nil {
				return ok, err
			}
		}
	}
}

// index is an agent pod's JOB_COMPLETION_INDEX ("" for other pods).
func index(p *corev1.Pod) string {
	if v, ok := p.Annotations[IndexAnnotation]; ok {
		return v
	}
	return p.Labels[IndexAnnotation]
}

// Waiting reasons that do not get better by waiting.
var fatalWaiting = map[string]bool{
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"CrashLoopBackOff":           true,
	"RunContainerError":          true,
}

type podState struct {
	running, succeeded bool
	fatal              *PodError
	text               string
}

// state reads one pod: running, done, failed for good (with the reason),
// or pending (with why: the scheduler's message, the container's waiting
// reason).
func state(p *corev1.Pod) podState {
	pe := func(c, reason, msg string, code *int32) podState {
		e := &PodError{Pod: p.Name, Index: index(p), Container: c, Reason: reason, ExitCode: code, Message: msg}
		return podState{fatal: e, text: "Failed: " + strings.TrimPrefix(e.Error(), "pod "+p.Name+": ")}
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			code := t.ExitCode
			return pe(cs.Name, t.Reason, t.Message, &code)
		}
		if w := cs.State.Waiting; w != nil && fatalWaiting[w.Reason] {
			return pe(cs.Name, w.Reason, w.Message, nil)
		}
	}
	switch p.Status.Phase {
	case corev1.PodFailed:
		return pe("", nonEmpty(p.Status.Reason, "Failed"), p.Status.Message, nil)
	case corev1.PodSucceeded:
		return podState{succeeded: true, text: "Succeeded"}
	case corev1.PodRunning:
		return podState{running: true, text: "Running"}
	}
	text := "Pending"
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			text += ": " + nonEmpty(c.Reason, "not scheduled")
			if c.Message != "" {
				text += ": " + c.Message
			}
			return podState{text: text}
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			text += ": " + w.Reason
			if w.Message != "" {
				text += ": " + w.Message
			}
			break
		}
	}
	return podState{text: text}
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
