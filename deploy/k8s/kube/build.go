package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Names and labels shared by the manifests, the builder and the watcher.
const (
	JobName         = "ceiling-agents"
	CoordinatorName = "ceiling-coordinator" // the Service and the pod
	ServerName      = "ceiling-server"      // the server under test: the Service and the pod
	TargetName      = "ceiling-target"      // the ConfigMap holding the coordinator's target file
	TargetPath      = "/etc/ceiling/target.json"
	// TokenSecret holds the agents' token (key TokenKey), mounted at
	// TokenPath in the coordinator and every agent (docs/agents.md,
	// "Authentication"). The kustomization makes it from agents.token;
	// `ceiling k8s apply` from a fresh token.
	TokenSecret = "ceiling-agents-token"
	TokenKey    = "token"
	TokenPath   = "/var/run/ceiling/" + TokenKey
	// PolicyName is the NetworkPolicy that admits only the agents' pods
	// to the coordinator.
	PolicyName = "ceiling-coordinator"
	// nonroot is the distroless image's user and group: the token's file
	// is group-readable by it (mode 0440), and by no one else.
	nonroot         = 65532
	AppLabel        = "app.kubernetes.io/name"
	ComponentLabel  = "app.kubernetes.io/component"
	App             = "ceiling"
	ComponentAgent  = "agent"
	ComponentCoord  = "coordinator"
	ComponentServer = "server"
	// IndexAnnotation is set by the Job controller on each pod of an
	// Indexed Job (also exported to the container as JOB_COMPLETION_INDEX).
	IndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// MaxAgents bounds --agents: far above any cluster this was tried on,
	// low enough that a typo does not create thousands of pods.
	MaxAgents = 1000
)

// Params are what `ceiling k8s` takes; Defaults are the shipped manifests'.
type Params struct {
	Namespace string // "" leaves it to kubectl or kustomize (the shipped files)
	Image     string
	Agents    int // N: completions = parallelism, AGENTS on the coordinator
	CPU       int // whole CPUs per agent: requests = limits, GOMAXPROCS
	Memory    string
	// CoordinatorCPU is the coordinator pod's whole CPUs: it runs the
	// harness and, today, the server under test beside it.
	CoordinatorCPU int
	Port           int           // the coordinator's port (the Service's)
	DialTimeout    time.Duration // the agents' --dial-timeout
	// ServerCPU and ServerPort are the server under test's (refserver).
	ServerCPU  int
	ServerPort int
	// Quick sets QUICK=1 on the coordinator's sweep (a small ladder).
	Quick bool
	// External, when set (host:port), is a coordinator outside the cluster
	// (the harness itself): the agents dial it, and Build makes neither
	// the Service nor the coordinator pod.
	External string
	// Token is the agents' token for the Secret that Apply creates. It is
	// never rendered: the shipped kustomization makes the Secret from a
	// file of the user's.
	Token string
}

// Defaults are the parameters of the files in deploy/k8s.
func Defaults() Params {
	return Params{
		Image:          "ghcr.io/ceiling-bench/ceiling:latest",
		Agents:         3,
		CPU:            2,
		Memory:         "2Gi",
		CoordinatorCPU: 2,
		ServerCPU:      2,
		ServerPort:     8080,
		Port:           7000,
		DialTimeout:    5 * time.Minute,
	}
}

// FieldError is a bad parameter; Field is the `ceiling k8s` flag's name
// without dashes.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "--" + e.Field + ": " + e.Msg }

// Validate checks every parameter before anything is built or submitted.
func (p Params) Validate() error {
	bad := func(f, format string, a ...any) error { return &FieldError{f, fmt.Sprintf(format, a...)} }
	if p.Namespace != "" {
		if errs := validation.IsDNS1123Label(p.Namespace); len(errs) > 0 {
			return bad("namespace", "%q: %s", p.Namespace, errs[0])
		}
	}
	switch {
	case p.Image == "" || strings.ContainsAny(p.Image, " \t\n"):
		return bad("image", "%q is not an image reference", p.Image)
	case p.Agents < 1 || p.Agents > MaxAgents:
		return bad("agents", "%d, want 1 to %d", p.Agents, MaxAgents)
	case p.CPU < 1:
		return bad("cpu", "%d, want whole CPUs >= 1 (requests = limits, for the static CPU manager)", p.CPU)
	case p.CoordinatorCPU < 1:
		return bad("coordinator-cpu", "%d, want whole CPUs >= 1", p.CoordinatorCPU)
	case p.ServerCPU < 1:
		return bad("server-cpu", "%d, want whole CPUs >= 1", p.ServerCPU)
	case p.Port < 1 || p.Port > 65535:
		return bad("port", "%d is not a port", p.Port)
	case p.ServerPort < 1 || p.ServerPort > 65535 || p.ServerPort == p.Port:
		return bad("server-port", "%d is not a port other than --port's", p.ServerPort)
	case p.DialTimeout <= 0:
		return bad("dial-timeout", "%v is not positive", p.DialTimeout)
	}
	q, err := resource.ParseQuantity(p.Memory)
	if err != nil || q.Sign() <= 0 {
		return bad("memory", "%q is not a positive quantity (e.g. 2Gi)", p.Memory)
	}
	if p.External != "" {
		if _, port, err := net.SplitHostPort(p.External); err != nil || port == "" {
			return bad("external", "%q is not host:port", p.External)
		}
	}
	return nil
}

// CoordinatorAddr is what the agents dial.
func (p Params) CoordinatorAddr() string {
	if p.External != "" {
		return p.External
	}
	return net.JoinHostPort(CoordinatorName, strconv.Itoa(p.Port))
}

// Objects is what Build makes. With External only the Job is set: the
// harness outside owns the server under test and the coordinator.
type Objects struct {
	Token         *corev1.Secret    // the agents' token; never rendered
	Target        *corev1.ConfigMap // the coordinator's target file
	ServerService *corev1.Service
	Server        *corev1.Pod
	Service       *corev1.Service // the coordinator's
	Policy        *networkingv1.NetworkPolicy
	Coordinator   *corev1.Pod
	Job           *batchv1.Job
}

// List is the objects that exist, in creation order: what a pod needs
// (its ConfigMap, the name it dials) before the pod.
func (o Objects) List() []any {
	var l []any
	for _, obj := range []any{o.Token, o.Target, o.ServerService, o.Server, o.Service, o.Policy, o.Coordinator} {
		switch obj := obj.(type) {
		case *corev1.Secret:
			if obj != nil {
				l = append(l, obj)
			}
		case *networkingv1.NetworkPolicy:
			if obj != nil {
				l = append(l, obj)
			}
		case *corev1.ConfigMap:
			if obj != nil {
				l = append(l, obj)
			}
		case *corev1.Service:
			if obj != nil {
				l = append(l, obj)
			}
		case *corev1.Pod:
			if obj != nil {
				l = append(l, obj)
			}
		}
	}
	return append(l, o.Job)
}

// Pods are the single pods that must run besides the agents.
func (o Objects) Pods() []*corev1.Pod {
	var l []*corev1.Pod
	for _, p := range []*corev1.Pod{o.Server, o.Coordinator} {
		if p != nil {
			l = append(l, p)
		}
	}
	return l
}

func labels(component string) map[string]string {
	return map[string]string{AppLabel: App, ComponentLabel: component}
}

// guaranteed is requests = limits: the Guaranteed QoS class.
func guaranteed(cpu int, mem string) corev1.ResourceRequirements {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(strconv.Itoa(cpu)),
		corev1.ResourceMemory: resource.MustParse(mem),
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// Build makes the objects for p; p must be valid.
func Build(p Params) Objects {
	o := Objects{Token: tokenSecret(p)}
	if p.External == "" {
		// Rather not on an agent's node: the server and the coordinator.
		away := awayFromAgents()
		o.Target = targetConfigMap(p)
		o.ServerService = headless(p, ServerName, p.ServerPort)
		o.Server = serverPod(p, away)
		o.Service = headless(p, CoordinatorName, p.Port)
		o.Policy = coordinatorPolicy(p)
		o.Coordinator = coordinatorPod(p, away)
	}
	o.Job = agentJob(p)
	return o
}

// objectMeta names an object of p's namespace and labels its component.
func objectMeta(p Params, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels(component)}
}

// awayFromAgents prefers a node that runs no agent.
func awayFromAgents() *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey:   "kubernetes.io/hostname",
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels(ComponentAgent)},
			},
		}},
	}}
}

// headless is the headless Service in front of the pod called name.
func headless(p Params, name string, port int) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(p, name, componentOf(name)),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  labels(componentOf(name)),
			Ports: []corev1.ServicePort{{
				Name: portName(name), Port: int32(port), Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt32(int32(port)),
			}},
		},
	}
}

// tokenSecret holds p.Token (empty when rendering: Render leaves the
// Secret out).
func tokenSecret(p Params) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(p, TokenSecret, ComponentAgent),
		Type:       corev1.SecretTypeOpaque,
	}
	if p.Token != "" {
		s.StringData = map[string]string{TokenKey: p.Token}
	}
	return s
}

// tokenVolume mounts TokenSecret at TokenPath's directory, readable by
// the image's group only (the token reader refuses a world-readable
// file).
func tokenVolume() (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: TokenSecret, DefaultMode: ptr(int32(0o440)),
		}}},
		corev1.VolumeMount{Name: "token", MountPath: path.Dir(TokenPath), ReadOnly: true}
}

// tokenReaders is the pod security context that makes the token's
// group the image's.
func tokenReaders() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{FSGroup: ptr(int64(nonroot))}
}

// coordinatorPolicy admits to the coordinator's pod only the agents'
// pods, on its port: no other pod in the cluster can reach it.
func coordinatorPolicy(p Params) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(int32(p.Port))
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(p, PolicyName, ComponentCoord),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: labels(ComponentCoord)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: labels(ComponentAgent)}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		},
	}
}

// targetConfigMap holds the coordinator's target file.
func targetConfigMap(p Params) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(p, TargetName, ComponentCoord),
		Data:       map[string]string{"target.json": TargetJSON(p)},
	}
}

// serverPod runs the reference server under test.
func serverPod(p Params, affinity *corev1.Affinity) *corev1.Pod {
	addr := "0.0.0.0:" + strconv.Itoa(p.ServerPort)
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(p, ServerName, ComponentServer),
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Affinity:      affinity,
			Containers: []corev1.Container{{
				Name:  "server",
				Image: p.Image,
				Command: []string{"refserver", "--addr", addr,
					"--app-id", "app-id", "--key", "app-key", "--secret", "app-secret"},
				Ports:     []corev1.ContainerPort{{Name: "ws", ContainerPort: int32(p.ServerPort), Protocol: corev1.ProtocolTCP}},
				Resources: guaranteed(p.ServerCPU, p.Memory),
				Env:       []corev1.EnvVar{{Name: "GOMAXPROCS", Value: strconv.Itoa(p.ServerCPU)}},
			}},
		},
	}
}

// coordinatorPod runs `ceiling sweep` over the target file, waiting for
// the agents on p.Port.
func coordinatorPod(p Params, affinity *corev1.Affinity) *corev1.Pod {
	env := []corev1.EnvVar{
		{Name: "AGENTS", Value: strconv.Itoa(p.Agents)},
		{Name: "AGENTS_LISTEN", Value: "0.0.0.0:" + strconv.Itoa(p.Port)},
		{Name: "AGENTS_TOKEN_FILE", Value: TokenPath},
		{Name: "TARGET", Value: TargetPath},
		{Name: "OUT", Value: "/out/ceiling.json"},
	}
	if p.Quick {
		env = append(env, corev1.EnvVar{Name: "QUICK", Value: "1"})
	}
	vol, mount := tokenVolume()
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(p, CoordinatorName, ComponentCoord),
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			Affinity:        affinity,
			SecurityContext: tokenReaders(),
			Containers: []corev1.Container{{
				Name:      "coordinator",
				Image:     p.Image,
				Command:   []string{"ceiling", "sweep"},
				Env:       env,
				Ports:     []corev1.ContainerPort{{Name: "agents", ContainerPort: int32(p.Port), Protocol: corev1.ProtocolTCP}},
				Resources: guaranteed(p.CoordinatorCPU, p.Memory),
				VolumeMounts: []corev1.VolumeMount{
					{Name: "target", MountPath: path.Dir(TargetPath), ReadOnly: true},
					{Name: "out", MountPath: "/out"},
					{Name: "tmp", MountPath: "/tmp"}, // the harness's work files; the image runs as non-root
					mount,
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "target", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: TargetName}}}},
				{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				vol,
			},
		},
	}
}

// agentJob is the indexed Job of p.Agents agents, one per node.
func agentJob(p Params) *batchv1.Job {
	n := int32(p.Agents)
	indexed := batchv1.IndexedCompletion
	vol, mount := tokenVolume()
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: objectMeta(p, JobName, ComponentAgent),
		Spec: batchv1.JobSpec{
			CompletionMode:          &indexed,
			Completions:             &n,
			Parallelism:             ptr(n),
			BackoffLimit:            ptr(int32(0)),
			TTLSecondsAfterFinished: ptr(int32(3600)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(ComponentAgent)},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: tokenReaders(),
					Volumes:         []corev1.Volume{vol},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							TopologyKey:   "kubernetes.io/hostname",
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels(ComponentAgent)},
						}},
					}},
					Containers: []corev1.Container{{
						Name:  "agent",
						Image: p.Image,
						Command: []string{"ceiling", "agent", "--coordinator", p.CoordinatorAddr(),
							"--dial-timeout", shortDuration(p.DialTimeout), "--token-file", TokenPath},
						Resources:    guaranteed(p.CPU, p.Memory),
						Env:          []corev1.EnvVar{{Name: "GOMAXPROCS", Value: strconv.Itoa(p.CPU)}},
						VolumeMounts: []corev1.VolumeMount{mount},
					}},
				},
			},
		},
	}
}

func componentOf(name string) string {
	if name == ServerName {
		return ComponentServer
	}
	return ComponentCoord
}

func portName(name string) string {
	if name == ServerName {
		return "ws"
	}
	return "agents"
}

// TargetJSON is the coordinator's target file: the server pod behind its
// headless Service, declared external (the harness boots nothing and
// stops nothing; every agent dials these URLs), its CPU read from the
// pod's /metrics (process_cpu_seconds_total) against its CPU limit
// (external_cpus). Keys sorted, two-space indent, newline at the
// end: the shipped ConfigMap holds exactly these bytes.
func TargetJSON(p Params) string {
	hp := net.JoinHostPort(ServerName, strconv.Itoa(p.ServerPort))
	t := map[string]any{
		"name":          "refserver-k8s",
		"external":      true,
		"external_cpus": p.ServerCPU,
		"echo_url":      "ws://" + hp + "/echo",
		"fanout": map[string]any{
			"url": "ws://" + hp, "app_id": "app-id", "key": "app-key", "secret": "app-secret",
		},
		"script":        map[string]any{"url": "ws://" + hp},
		"metrics":       map[string]any{"url": "http://" + hp + "/metrics", "format": "prometheus"},
		"ready":         "http://" + hp + "/health",
		"ready_timeout": "2m",
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		panic(err) // strings, a bool, an int and maps of strings only
	}
	return string(b) + "\n"
}

func ptr[T any](v T) *T { return &v }

// shortDuration writes 5m rather than 5m0s, as a person would.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// Render writes the objects as one multi-document YAML stream, without the
// fields the API server fills (status, creationTimestamp), and without the
// token's Secret.
func Render(o Objects) ([]byte, error) {
	var b bytes.Buffer
	o.Token = nil // never printed: the kustomization makes it from a file
	for i, obj := range o.List() {
		y, err := clean(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// clean is obj as YAML without status and null creationTimestamps: the
// canonical form both Render and the manifest test compare.
func clean(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	dropTimestamps(m)
	return yaml.Marshal(m)
}

func dropTimestamps(v any) {
	switch v := v.(type) {
	case map[string]any:
		if ts, ok := v["creationTimestamp"]; ok && ts == nil {
			delete(v, "creationTimestamp")
		}
		for k, x := range v {
			dropTimestamps(x)
			// An emptied metadata (the template's, say) goes too.
			if mm, ok := v[k].(map[string]any); ok && len(mm) == 0 && k == "metadata" {
				delete(v, k)
			}
		}
	case []any:
		for _, x := range v {
			dropTimestamps(x)
		}
	}
}
