package kube

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestWorkflowTriggersAndPins: k8s.yml runs on demand and nightly only
// (never on pull_request_target: no code from a pull request next to a
// cluster), and every action is pinned by commit.
func TestWorkflowTriggersAndPins(t *testing.T) {
	data, err := os.ReadFile("../../../.github/workflows/k8s.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf map[string]any
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	on, ok := wf["on"].(map[string]any)
	if !ok {
		on, _ = wf["true"].(map[string]any) // YAML 1.1 reads a bare on as true
	}
	var triggers []string
	for k := range on {
		triggers = append(triggers, k)
	}
	slices.Sort(triggers)
	if !slices.Equal(triggers, []string{"schedule", "workflow_dispatch"}) {
		t.Errorf("k8s.yml triggers %v, want only schedule and workflow_dispatch", triggers)
	}
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	for _, line := range strings.Split(string(data), "\n") {
		_, use, ok := strings.Cut(line, "uses: ")
		if !ok {
			continue
		}
		use, _, _ = strings.Cut(use, " ")
		if !pinned.MatchString(use) {
			t.Errorf("k8s.yml: %q is not pinned by commit SHA", use)
		}
	}
	if !strings.Contains(string(data), "sigs.k8s.io/kind@v0.33.0") {
		t.Error("k8s.yml: kind is not run at a pinned version")
	}
}
