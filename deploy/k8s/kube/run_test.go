package kube

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// setup is a fake cluster whose pod watches are fed by the test: each
// Watch call takes the next watcher of ws (the last one again when they
// run out).
func setup(t *testing.T, ws ...*watch.FakeWatcher) (*fake.Clientset, *Runner, *[]time.Duration) {
	t.Helper()
	cs := fake.NewClientset()
	var mu sync.Mutex
	i := 0
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		w := ws[min(i, len(ws)-1)]
		i++
		return true, w, nil
	})
	var waits []time.Duration
	r := &Runner{Client: cs, Namespace: "load", Sleep: func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}}
	return cs, r, &waits
}

func objects() Objects {
	p := Defaults()
	p.Namespace = "load"
	p.Token = "0123456789abcdef0123456789abcdef"
	return Build(p)
}

func pod(name, idx string, component string, status corev1.PodStatus) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "load", Labels: labels(component)},
		Status:     status,
	}
	if idx != "" {
		p.Annotations = map[string]string{IndexAnnotation: idx}
	}
	return p
}

func agent(i string, st corev1.PodStatus) *corev1.Pod {
	return pod("ceiling-agents-"+i+"-x"+i, i, ComponentAgent, st)
}

func coordinator(st corev1.PodStatus) *corev1.Pod {
	return pod(CoordinatorName, "", ComponentCoord, st)
}

func server(st corev1.PodStatus) *corev1.Pod {
	return pod(ServerName, "", ComponentServer, st)
}

var (
	running = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "agent", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	pending = corev1.PodStatus{Phase: corev1.PodPending}
)

// buffered is a watcher already holding its events, closed after them
// when closed is true.
func buffered(closed bool, evs ...watch.Event) *watch.FakeWatcher {
	w := watch.NewFakeWithChanSize(len(evs)+1, false)
	for _, ev := range evs {
		w.Action(ev.Type, ev.Object)
	}
	if closed {
		w.Stop()
	}
	return w
}

func add(p *corev1.Pod) watch.Event { return watch.Event{Type: watch.Added, Object: p} }
func mod(p *corev1.Pod) watch.Event { return watch.Event{Type: watch.Modified, Object: p} }

func TestSubmitCreatesServiceCoordinatorJob(t *testing.T) {
	cs, r, _ := setup(t, buffered(false))
	o := objects()
	if err := r.Submit(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			order = append(order, a.GetResource().Resource+"/"+a.GetNamespace())
		}
	}
	if want := "secrets/load configmaps/load services/load pods/load services/load networkpolicies/load pods/load jobs/load"; strings.Join(order, " ") != want {
		t.Errorf("created %v, want %s", order, want)
	}
	job, err := cs.BatchV1().Jobs("load").Get(context.Background(), JobName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *job.Spec.Completions != 3 || *job.Spec.Parallelism != 3 || string(*job.Spec.CompletionMode) != "Indexed" {
		t.Errorf("job spec %+v", job.Spec)
	}
	sec, err := cs.CoreV1().Secrets("load").Get(context.Background(), TokenSecret, metav1.GetOptions{})
	if err != nil || sec.StringData[TokenKey] != "0123456789abcdef0123456789abcdef" {
		t.Errorf("the token's Secret: %v, %v", sec, err)
	}
	empty := objects()
	empty.Token.StringData = nil
	if err := r.Submit(context.Background(), Objects{Token: empty.Token, Job: empty.Job}); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("a Secret without a token was submitted: %v", err)
	}
	// A second submit finds the leftovers: not retried, named.
	err = r.Submit(context.Background(), o)
	var ae *APIError
	if !errors.As(err, &ae) || !apierrors.IsAlreadyExists(err) || ae.Retries != 0 || !strings.Contains(err.Error(), "create Secret load/ceiling-agents-token") {
		t.Errorf("second submit: %v, want an APIError for the existing Secret, no retry", err)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	cs, r, waits := setup(t, buffered(false))
	calls := 0
	cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= 2 {
			return true, nil, apierrors.NewTooManyRequests("slow down", 7)
		}
		return false, nil, nil
	})
	if err := r.Submit(context.Background(), objects()); err != nil {
		t.Fatalf("two 429s then success: %v", err)
	}
	if len(*waits) != 2 || (*waits)[0] != 7*time.Second {
		t.Errorf("waits %v, want two of the Retry-After's 7s", *waits)
	}

	cs, r, waits = setup(t, buffered(false))
	r.Retries = 2
	cs.PrependReactor("create", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
	})
	err := r.Submit(context.Background(), objects())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Retries != 2 || ae.Kind != "Service" || !strings.Contains(err.Error(), "gave up after 2 retries") {
		t.Errorf("always 500: %v, want an APIError after 2 retries", err)
	}
	if len(*waits) != 2 || (*waits)[0] != time.Second || (*waits)[1] != 2*time.Second {
		t.Errorf("waits %v, want 1s then 2s", *waits)
	}

	cs, r, waits = setup(t, buffered(false))
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, CoordinatorName, errors.New("no"))
	})
	if err := r.Submit(context.Background(), objects()); !errors.As(err, &ae) || !apierrors.IsForbidden(err) || len(*waits) != 0 {
		t.Errorf("403: %v after %v, want an APIError at once", err, *waits)
	}
}

// TestWaitRunning: pods become Running through the watch, not the list.
func TestWaitRunning(t *testing.T) {
	w := buffered(false,
		add(server(running)), add(coordinator(pending)), add(agent("0", pending)), add(agent("1", pending)), add(agent("2", pending)),
		mod(coordinator(running)), mod(agent("0", running)), mod(agent("2", running)),
		mod(agent("1", running)),
	)
	_, r, _ := setup(t, w)
	var log bytes.Buffer
	r.Log = &log
	if err := r.WaitRunning(context.Background(), objects(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "pod ceiling-agents-1-x1 (agent 1): Running") {
		t.Errorf("log lacks agent 1's change:\n%s", log.String())
	}
}

// TestWaitRunningRelists: a watch that ends is followed by a new list and
// watch; what happened meanwhile is in the list.
func TestWaitRunningRelists(t *testing.T) {
	cs, r, waits := setup(t,
		buffered(true, add(server(running)), add(coordinator(running)), add(agent("0", running))),
		buffered(false, add(agent("2", running))),
	)
	// Between the two watches agent 1 started: the second list has it.
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if len(*waits) == 0 {
			return true, &corev1.PodList{}, nil
		}
		return true, &corev1.PodList{Items: []corev1.Pod{*server(running), *coordinator(running), *agent("0", running), *agent("1", running)}}, nil
	})
	if err := r.WaitRunning(context.Background(), objects(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(*waits) != 1 {
		t.Errorf("waits %v, want one pause before the second list", *waits)
	}
}

func TestWaitRunningNamesTheFailedPod(t *testing.T) {
	code := func(c int32) *int32 { return &c }
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want PodError
		text string
	}{
		{"image pull", agent("1", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "agent", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "ceiling:nope"`}}}}}),
			PodError{Pod: "ceiling-agents-1-x1", Index: "1", Container: "agent", Reason: "ImagePullBackOff", Message: `Back-off pulling image "ceiling:nope"`},
			`pod ceiling-agents-1-x1 (agent 1): ImagePullBackOff (container agent): Back-off pulling image "ceiling:nope"`},
		{"agent exited", agent("2", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "agent", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 2, Reason: "Error", Message: "ceiling agent: --coordinator is required"}}}}}),
			PodError{Pod: "ceiling-agents-2-x2", Index: "2", Container: "agent", Reason: "Error", ExitCode: code(2), Message: "ceiling agent: --coordinator is required"},
			"pod ceiling-agents-2-x2 (agent 2): container agent exited with code 2 (Error): ceiling agent: --coordinator is required"},
		{"evicted", coordinator(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}),
			PodError{Pod: CoordinatorName, Reason: "Evicted", Message: "low on memory"},
			"pod ceiling-coordinator: Evicted: low on memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r, _ := setup(t, buffered(false, add(server(running)), add(coordinator(running)), add(agent("0", running)), add(tc.pod)))
			err := r.WaitRunning(context.Background(), objects(), 10*time.Second)
			var pe *PodError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a PodError", err)
			}
			if err.Error() != tc.text {
				t.Errorf("message %q, want %q", err, tc.text)
			}
			if (pe.ExitCode == nil) != (tc.want.ExitCode == nil) || (pe.ExitCode != nil && *pe.ExitCode != *tc.want.ExitCode) {
				t.Errorf("exit code %v, want %v", pe.ExitCode, tc.want.ExitCode)
			}
			pe.ExitCode, tc.want.ExitCode = nil, nil
			if *pe != tc.want {
				t.Errorf("PodError %+v, want %+v", *pe, tc.want)
			}
		})
	}
}

func TestWaitRunningDeadlineNamesPendingPods(t *testing.T) {
	unsched := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."}}}
	_, r, _ := setup(t, buffered(false, add(server(running)), add(coordinator(running)), add(agent("0", running)), add(agent("1", unsched))))
	err := r.WaitRunning(context.Background(), objects(), 50*time.Millisecond)
	var de *DeadlineError
	if !errors.As(err, &de) {
		t.Fatalf("err %v, want a DeadlineError", err)
	}
	if de.Missing != 1 || len(de.Pods) != 1 || de.Pods[0].Pod != "ceiling-agents-1-x1" {
		t.Errorf("DeadlineError %+v, want agent 1 pending and one agent not created", de)
	}
	for _, s := range []string{"the server, the coordinator and 3 agents Running", "1 agent pod(s) not created yet",
		"pod ceiling-agents-1-x1 (agent 1): Pending: Unschedulable: 0/2 nodes are available"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}

// TestApplyCleansUpOnCancel: cancelled while waiting, Apply deletes what
// it created, with propagation Background, and returns the cancellation.
func TestApplyCleansUpOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, r, _ := setup(t, buffered(false, add(coordinator(pending))))
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		cancel() // the run is under way: the user presses ^C
		return false, nil, nil
	})
	err := r.Apply(ctx, objects(), ApplyOptions{RunningTimeout: time.Minute, DoneTimeout: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	assertGone(t, cs)
}

func assertGone(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	bg := 0
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok {
			if p := d.GetDeleteOptions().PropagationPolicy; p != nil && *p == metav1.DeletePropagationBackground {
				bg++
			}
		}
	}
	if bg != 8 {
		t.Errorf("%d deletes with propagation Background, want 8 (Job, 2 Pods, 2 Services, NetworkPolicy, ConfigMap, Secret)", bg)
	}
	if _, err := cs.CoreV1().ConfigMaps("load").Get(context.Background(), TargetName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap still there: %v", err)
	}
	if _, err := cs.CoreV1().Pods("load").Get(context.Background(), ServerName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("server pod still there: %v", err)
	}
	ctx := context.Background()
	if _, err := cs.BatchV1().Jobs("load").Get(ctx, JobName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Job still there: %v", err)
	}
	if _, err := cs.CoreV1().Pods("load").Get(ctx, CoordinatorName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("coordinator pod still there: %v", err)
	}
	if _, err := cs.CoreV1().Services("load").Get(ctx, CoordinatorName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service still there: %v", err)
	}
}

// TestApplyRunsToTheEnd: running, then the coordinator's sweep ends; its
// log is copied and everything is deleted.
func TestApplyRunsToTheEnd(t *testing.T) {
	done := corev1.PodStatus{Phase: corev1.PodSucceeded}
	cs, r, _ := setup(t, buffered(false,
		add(server(running)), add(coordinator(running)), add(agent("0", running)), add(agent("1", running)), add(agent("2", running)),
		mod(agent("0", corev1.PodStatus{Phase: corev1.PodSucceeded})),
		mod(coordinator(done))))
	var logs bytes.Buffer
	if err := r.Apply(context.Background(), objects(), ApplyOptions{RunningTimeout: time.Minute, DoneTimeout: time.Minute, Logs: &logs}); err != nil {
		t.Fatal(err)
	}
	if logs.String() != "fake logs" {
		t.Errorf("logs %q, want the fake's", logs.String())
	}
	assertGone(t, cs)
}

// TestApplyCoordinatorFailed: the sweep's failure is the pod's exit code,
// and its log is still copied.
func TestApplyCoordinatorFailed(t *testing.T) {
	failed := corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "coordinator", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}
	cs, r, _ := setup(t, buffered(false,
		add(server(running)), add(coordinator(running)), add(agent("0", running)), add(agent("1", running)), add(agent("2", running)),
		mod(coordinator(failed))))
	var logs bytes.Buffer
	err := r.Apply(context.Background(), objects(), ApplyOptions{RunningTimeout: time.Minute, DoneTimeout: time.Minute, Logs: &logs})
	var pe *PodError
	if !errors.As(err, &pe) || pe.Pod != CoordinatorName || *pe.ExitCode != 1 {
		t.Fatalf("err %v, want the coordinator's exit code", err)
	}
	if logs.Len() == 0 {
		t.Error("the failed sweep's log was not copied")
	}
	assertGone(t, cs)
}

// TestCleanupTolerant: deleting what is already gone is not an error.
func TestCleanupTolerant(t *testing.T) {
	_, r, _ := setup(t, buffered(false))
	if err := r.Cleanup(objects()); err != nil {
		t.Errorf("cleanup of nothing: %v", err)
	}
}
