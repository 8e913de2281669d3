// Package kube puts ceiling's generator agents on a Kubernetes cluster: it
// builds the objects of deploy/k8s from typed parameters, submits them with
// client-go, watches them until they run, and removes them again.
//
// # Design
//
// One source of truth, two forms. The YAML files in deploy/k8s are what a
// person reads, reviews and feeds to `kubectl apply -k`; [Build] is what
// `ceiling k8s apply` submits. A test decodes every shipped file strictly
// (an unknown or duplicated field fails, naming the field) and checks it
// equals Build's object for the default [Params], so the two cannot drift:
// change one and the test says which field differs. `ceiling k8s render`
// prints Build's objects for any parameters (testdata/render.golden.yaml,
// rewritten with `go test ./deploy/k8s/kube -update`).
//
// The objects (docs/k8s.md):
//
//   - agents-job.yaml: the N agents as one Indexed Job. completions =
//     parallelism = N and backoffLimit 0: the coordinator's barrier waits
//     for all N at once, and a retried agent cannot rejoin a window.
//     JOB_COMPLETION_INDEX, set by Kubernetes on each pod, is the agent's
//     segment (`ceiling agent` reads it). Required pod anti-affinity on
//     kubernetes.io/hostname puts each agent on a node of its own, since
//     agents stand for separate hosts. CPU and memory requests equal limits
//     in whole CPUs: the pod is in the Guaranteed QoS class, which a kubelet
//     running the static CPU manager policy pins to exclusive cores (the
//     generator's LT_CPUSET, on a node). GOMAXPROCS equals the CPU count.
//   - coordinator-service.yaml: a headless Service, so an agent dials the
//     coordinator pod's own address with no proxy in the path, and the round
//     trip it measures for its clock offset is the network's.
//   - coordinator-pod.yaml: the coordinator is a pod running `ceiling sweep`
//     with AGENTS=N and AGENTS_LISTEN=0.0.0.0:PORT (it starts no agent of
//     its own and waits for the Job's N to dial in, for the whole sweep),
//     not the harness outside the cluster. Agents dial out, so whatever
//     runs the coordinator must be reachable from every pod, and so must the
//     server under test: inside the cluster both hold on any cluster (kind
//     on a laptop or a runner included), while a laptop or a runner outside
//     has no route in from the pods. [Params.External] names a coordinator
//     outside instead; Build then makes the Job only.
//   - server-pod.yaml, server-service.yaml: the server under test (the
//     bundled refserver, same image) behind a headless Service of its own,
//     and target-configmap.yaml: the coordinator's target file, with no
//     command (the harness boots nothing; every agent dials its URLs).
//
// Submitting and watching ([Runner]): create the objects, each name before
// the pods that dial it; then watch the pods (a list, then a watch from its
// resourceVersion, re-listed if the watch ends) until the server, the
// coordinator and N agents are Running or the deadline passes. A pod that cannot get there
// ends the wait at once with a [*PodError] naming the pod, its agent index
// and the reason: an image that cannot be pulled (ImagePullBackOff,
// InvalidImageName), a container that failed (its exit code), a crash loop.
// A pod that is merely Pending (unschedulable, still pulling) is given until
// the deadline; then [*DeadlineError] lists each pod that was not running and
// why (the scheduler's message for an unschedulable pod, e.g. the
// anti-affinity on a cluster with fewer nodes than agents).
//
// Errors at the API boundary are typed ([*APIError]: the operation, the
// object, and whether retries ran out) and transient ones (429 with its
// Retry-After, 5xx, server timeouts) are retried a bounded number of times
// with a wait that tests replace, as publish/github.go does for GitHub.
// [Runner.Cleanup] deletes everything with propagation Background (the Job's
// pods go with it) on a context of its own, so it still runs after the
// caller's context was cancelled; objects already gone are not an error.
//
// Without a cluster everything here is tested offline: strict decoding of
// the shipped files and the submit/watch/cleanup logic against client-go's
// fake clientset, whose watch reactor feeds the pod events. The workflow
// .github/workflows/k8s.yml runs the same on a kind cluster.
package kube
