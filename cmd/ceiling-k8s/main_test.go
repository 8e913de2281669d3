package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ceiling-bench/ceiling/deploy/k8s/kube"
)

func TestK8sRenderIsTheBuilder(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"render"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	want, err := kube.Render(kube.Build(kube.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("render with no flags is not the defaults (deploy/k8s):\n%s", out.String())
	}
	out.Reset()
	if err := run([]string{"render", "--agents", "5", "--namespace", "load", "--image", "ceiling:dev"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	docs, err := kube.Decode("render", out.Bytes())
	if err != nil || len(docs) != 7 || strings.Contains(out.String(), "kind: Secret") {
		t.Fatalf("render output: %d documents, %v", len(docs), err)
	}
	for _, s := range []string{"completions: 5", "namespace: load", "image: ceiling:dev", `value: "5"`} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("render lacks %q", s)
		}
	}
}

func TestK8sBadInputExits2NamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "render, apply or delete"},
		{[]string{"scale"}, `"scale"`},
		{[]string{"render", "--agents", "0"}, "--agents"},
		{[]string{"render", "--cpu", "x"}, "-cpu"},
		{[]string{"render", "--memory", "lots"}, "--memory"},
		{[]string{"render", "--namespace", "No"}, "--namespace"},
		{[]string{"apply", "--running-timeout", "0s"}, "--running-timeout"},
		{[]string{"apply", "--timeout", "0s"}, "--timeout"},
		{[]string{"apply", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig"},
		{[]string{"render", "extra"}, `"extra"`},
		{[]string{"apply", "--external", "harness.example:7000"}, "--external: the agents must prove the harness's token: set AGENTS_TOKEN"},
	} {
		t.Setenv("AGENTS_TOKEN", "")
		var stderr bytes.Buffer
		err := run(tc.args, io.Discard, &stderr)
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error()+stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %v, want 2 naming %s", tc.args, code, err, tc.want)
		}
	}
}

// TestK8sApplyFailsAndCleansUp: a Job the API refuses is named, exit 1, and
// what was created before it is deleted.
func TestK8sApplyFailsAndCleansUp(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, kube.JobName, errors.New("quota"))
	})
	old := newKubeClient
	defer func() { newKubeClient = old }()
	newKubeClient = func(string, string) (kubernetes.Interface, string, error) { return cs, "ci", nil }
	var stderr bytes.Buffer
	err := run([]string{"apply"}, io.Discard, &stderr)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "create Job ci/ceiling-agents") {
		t.Fatalf("exit %d, %v, want 1 naming the Job", exitCode(err), err)
	}
	if _, err := cs.CoreV1().Services("ci").Get(context.Background(), kube.CoordinatorName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Service was left behind: %v", err)
	}
	if !strings.Contains(stderr.String(), "deleted Service ci/ceiling-coordinator") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestK8sHelpStyle: the help prints flags as every ceiling command does
// (double dashes, within 100 columns).
func TestK8sHelpStyle(t *testing.T) {
	var stderr bytes.Buffer
	_ = run([]string{"render", "-h"}, io.Discard, &stderr)
	out := stderr.String()
	if !strings.Contains(out, "\n  --agents N\n") {
		t.Errorf("no --agents N in the help:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 100 || strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
			t.Errorf("help line %q: over 100 columns or a single dash", line)
		}
	}
}
