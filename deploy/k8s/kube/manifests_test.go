package kube

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/render.golden.yaml")

// shipped decodes every file in deploy/k8s strictly, by kind.
func shipped(t *testing.T) (map[string]any, *Kustomization, []string) {
	t.Helper()
	files, err := filepath.Glob("../*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/k8s: %v", err)
	}
	objs := map[string]any{}
	var kust *Kustomization
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := Decode(filepath.Base(f), data)
		if err != nil {
			t.Fatalf("strict decode: %v", err)
		}
		for _, d := range docs {
			switch d := d.(type) {
			case *Kustomization:
				kust = d
				continue
			}
			objs[kindOf(d)] = d
		}
		if filepath.Base(f) != "kustomization.yaml" {
			names = append(names, filepath.Base(f))
		}
	}
	return objs, kust, names
}

// kindOf is "Kind/name".
func kindOf(o any) string {
	k, n := kindName(o)
	return k + "/" + n
}

// TestShippedManifests: every file in deploy/k8s decodes strictly, the
// kustomization lists exactly the others, and each object is the one Build
// makes from Defaults (the diff names the field that drifted).
func TestShippedManifests(t *testing.T) {
	objs, kust, names := shipped(t)
	if kust == nil {
		t.Fatal("deploy/k8s has no kustomization.yaml")
	}
	got := slices.Sorted(slices.Values(kust.Resources))
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("kustomization.yaml resources %v, want every manifest in deploy/k8s: %v", got, names)
	}
	built := Build(Defaults())
	built.Token = nil // the kustomization's secretGenerator makes it
	if g := kust.SecretGenerator; len(g) != 1 || g[0].Name != TokenSecret || !slices.Equal(g[0].Files, []string{TokenKey + "=agents.token"}) ||
		kust.GeneratorOptions == nil || !kust.GeneratorOptions.DisableNameSuffixHash {
		t.Errorf("kustomization.yaml: secretGenerator %+v, want %s from %s=agents.token under its own name (disableNameSuffixHash)", g, TokenSecret, TokenKey)
	}
	for _, b := range built.List() {
		k := kindOf(b)
		s, ok := objs[k]
		if !ok {
			t.Errorf("deploy/k8s ships no %s", k)
			continue
		}
		want, _ := clean(b)
		have, _ := clean(s)
		if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(have), "\n")); d != "" {
			t.Errorf("deploy/k8s %s differs from Build(Defaults()) (-built +shipped):\n%s", k, d)
		}
	}
	if len(objs) != len(built.List()) {
		t.Errorf("deploy/k8s ships %d objects, Build makes %d", len(objs), len(built.List()))
	}
}

func TestDecodeStrict(t *testing.T) {
	job, err := os.ReadFile("../agents-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", "backoffLimit: 0", "backofLimit: 0", `unknown field "spec.backofLimit"`},
		{"unknown nested field", "restartPolicy: Never", "restartPolicy: Never\n      restartPolicyy: Never", `unknown field "spec.template.spec.restartPolicyy"`},
		{"duplicate field", "parallelism: 3", "parallelism: 3\n  parallelism: 4", `"parallelism"`},
		{"wrong type", "completions: 3", "completions: three", "completions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(string(job), tc.from, tc.to, 1)
			if bad == string(job) {
				t.Fatalf("%q not in agents-job.yaml", tc.from)
			}
			_, err := Decode("agents-job.yaml", []byte(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "agents-job.yaml") {
				t.Fatalf("Decode = %v, want an error naming the file and %s", err, tc.want)
			}
		})
	}
	if _, err := Decode("x.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\n")); err == nil || !strings.Contains(err.Error(), "Deployment") {
		t.Errorf("a kind deploy/k8s does not ship: %v", err)
	}
	if _, err := Decode("x.yaml", []byte("# only a comment\n---\n")); err == nil {
		t.Error("a file with no document decoded")
	}
}

// TestRenderGolden: what `ceiling k8s render` prints, for the defaults and
// for other parameters; it decodes strictly back into the same objects.
func TestRenderGolden(t *testing.T) {
	other := Defaults()
	other.Namespace, other.Image, other.Agents, other.CPU, other.Memory = "load", "ceiling:dev", 5, 4, "4Gi"
	other.CoordinatorCPU, other.Port, other.DialTimeout, other.Quick = 1, 7100, 90*time.Second, true
	ext := Defaults()
	ext.External = "harness.example:7000"
	var all []byte
	for _, p := range []Params{Defaults(), other, ext} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		out, err := Render(Build(p))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := Decode("render", out)
		if err != nil {
			t.Fatalf("render output does not decode strictly: %v", err)
		}
		// Every object but the token's Secret, which is never printed.
		if len(docs) != len(Build(p).List())-1 || strings.Contains(string(out), "kind: Secret") {
			t.Fatalf("render: %d documents, want %d and no Secret", len(docs), len(Build(p).List())-1)
		}
		all = append(all, "# ---- "+p.Image+" agents="+strconv.Itoa(p.Agents)+" external="+p.External+"\n"...)
		all = append(all, out...)
	}
	golden := filepath.Join("testdata", "render.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, all, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./deploy/k8s/kube -run TestRenderGolden -update)", err)
	}
	if d := cmp.Diff(string(want), string(all)); d != "" {
		t.Errorf("render differs from %s (-want +got; -update rewrites it):\n%s", golden, d)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		field string
		mod   func(*Params)
	}{
		{"namespace", func(p *Params) { p.Namespace = "Not_A_Label" }},
		{"image", func(p *Params) { p.Image = "" }},
		{"image", func(p *Params) { p.Image = "a b" }},
		{"agents", func(p *Params) { p.Agents = 0 }},
		{"agents", func(p *Params) { p.Agents = MaxAgents + 1 }},
		{"cpu", func(p *Params) { p.CPU = 0 }},
		{"coordinator-cpu", func(p *Params) { p.CoordinatorCPU = 0 }},
		{"memory", func(p *Params) { p.Memory = "lots" }},
		{"memory", func(p *Params) { p.Memory = "0" }},
		{"server-cpu", func(p *Params) { p.ServerCPU = 0 }},
		{"port", func(p *Params) { p.Port = 70000 }},
		{"server-port", func(p *Params) { p.ServerPort = 7000 }},
		{"dial-timeout", func(p *Params) { p.DialTimeout = 0 }},
		{"external", func(p *Params) { p.External = "no-port" }},
	} {
		p := Defaults()
		tc.mod(&p)
		var fe *FieldError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.HasPrefix(err.Error(), "--"+tc.field+": ") {
			t.Errorf("%+v: Validate = %v, want an error naming --%s", p, err, tc.field)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
