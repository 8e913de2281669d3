package kube

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Kustomization is the part of kustomize's file that deploy/k8s uses;
// decoding it strictly rejects anything else, so a field added there is
// added here on purpose.
type Kustomization struct {
	APIVersion       string            `json:"apiVersion"`
	Kind             string            `json:"kind"`
	Namespace        string            `json:"namespace,omitempty"`
	Resources        []string          `json:"resources"`
	SecretGenerator  []SecretGenerator `json:"secretGenerator,omitempty"`
	GeneratorOptions *struct {
		DisableNameSuffixHash bool `json:"disableNameSuffixHash"`
	} `json:"generatorOptions,omitempty"`
}

// SecretGenerator is a Secret kustomize makes from files: the agents'
// token (TokenSecret), from a file the user writes.
type SecretGenerator struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// Decode reads a YAML stream (documents separated by ---) strictly: each
// document's apiVersion and kind pick a Go type (ConfigMap, Service, Pod,
// Job, Kustomization), and a field that type does not have, or a field
// given twice, is an error naming the field. name (a file name) prefixes
// errors.
func Decode(name string, data []byte) ([]any, error) {
	var out []any
	for i, doc := range splitDocs(data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		var obj any
		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/Service":
			obj = &corev1.Service{}
		case "v1/Pod":
			obj = &corev1.Pod{}
		case "v1/ConfigMap":
			obj = &corev1.ConfigMap{}
		case "batch/v1/Job":
			obj = &batchv1.Job{}
		case "networking.k8s.io/v1/NetworkPolicy":
			obj = &networkingv1.NetworkPolicy{}
		case "kustomize.config.k8s.io/v1beta1/Kustomization":
			obj = &Kustomization{}
		default:
			return nil, fmt.Errorf("%s: document %d: apiVersion %q kind %q is not one deploy/k8s ships", name, i+1, tm.APIVersion, tm.Kind)
		}
		if err := strict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): %w", name, i+1, tm.Kind, err)
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no document", name)
	}
	return out, nil
}

// strict decodes one YAML document into obj, as the API server's strict
// field validation does: an unknown field is named by its path
// (spec.template.spec.restartPolicyy), a duplicate by its name.
func strict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc) // duplicate keys are errors here
	if err != nil {
		return err
	}
	serrs, err := sigsjson.UnmarshalStrict(j, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(serrs...)
}

// splitDocs cuts a stream at lines that are exactly "---", dropping
// documents that hold only comments and blank lines.
func splitDocs(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	content := false
	flush := func() {
		if content {
			docs = append(docs, bytes.Clone(cur.Bytes()))
		}
		cur.Reset()
		content = false
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, "\r\n") == "---" {
			flush()
			continue
		}
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			content = true
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}
