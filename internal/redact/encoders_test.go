package redact

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// hostile is issue 35's secret: every character an encoder treats
// differently (/ + & < " > \ space, a non-ASCII é, = ?), and one beyond
// the BMP that JSON writes as a surrogate pair.
const hostile = `Sx9/q+Z&w<"e">\ é=1 ?end` + "\U0001F511"

// TestFormsOfRealEncoders: the secret as real encoders write it, once and
// twice, is masked. Go's own run everywhere; Node's JSON.stringify and
// encodeURIComponent where node is (CI installs it: the Node generator
// needs it, and under CI=true its absence fails); Python's json.dumps
// (ASCII and not) and urllib's quote and quote_plus where python3 is.
func TestFormsOfRealEncoders(t *testing.T) {
	s := New(hostile)
	check := func(encoder, form string) {
		t.Helper()
		if form == hostile {
			return
		}
		line := `level=info config="` + form + `" next`
		if got := s.String(line); strings.Contains(got, form) || !s.Contains([]byte(line)) {
			t.Errorf("%s: %q got through: %q", encoder, form, got)
		}
	}
	goJSON := func(v string) string { b, _ := json.Marshal(v); return string(b[1 : len(b)-1]) }
	check("Go json.Marshal", goJSON(hostile))
	check("Go json.Marshal twice", goJSON(goJSON(hostile)))
	check("Go url.QueryEscape", url.QueryEscape(hostile))
	check("Go url.PathEscape", url.PathEscape(hostile))

	run := func(name string, args ...string) []string {
		t.Helper()
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	}
	if _, err := exec.LookPath("node"); err == nil {
		// Each line is one form; JSON.stringify's quotes are cut off.
		const js = `const s = process.argv[1];
const j = (v) => JSON.stringify(v).slice(1, -1);
console.log([j(s), j(j(s)), encodeURIComponent(s), j(encodeURIComponent(s))].join("\n"));`
		names := []string{"JSON.stringify", "JSON.stringify twice", "encodeURIComponent", "encodeURIComponent in JSON"}
		for i, f := range run("node", "-e", js, hostile) {
			check("node "+names[i], f)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true and no node on PATH: .ci/run installs it (npm)")
	} else {
		t.Log("no node on PATH: Node's encoders not checked")
	}
	if _, err := exec.LookPath("python3"); err == nil {
		const py = `import json, sys, urllib.parse as u
s = sys.argv[1]
j = lambda v, a=True: json.dumps(v, ensure_ascii=a)[1:-1]
print("\n".join([j(s), j(j(s)), j(s, False), j(j(s, False), False), u.quote(s, safe=""), u.quote(s), u.quote_plus(s)]))`
		names := []string{"json.dumps", "json.dumps twice", "json.dumps(ensure_ascii=False)", "json.dumps(ensure_ascii=False) twice", `quote(safe="")`, "quote", "quote_plus"}
		for i, f := range run("python3", "-c", py, hostile) {
			check("python3 "+names[i], f)
		}
	} else {
		t.Log("no python3 on PATH: Python's encoders not checked")
	}
}

// TestFormsByHand pins the forms of the encoders that are not on this
// machine (PHP's json_encode, upper-case \u escapes, lower-case %xx).
func TestFormsByHand(t *testing.T) {
	s := New(hostile)
	for _, form := range []string{
		`Sx9\/q+Z&w<\"e\">\\ \u00e9=1 ?end\ud83d\udd11`,                     // PHP json_encode
		`Sx9/q+Z&w<\"e\">\\ \u00E9=1 ?end\uD83D\uDD11`,                      // upper-case hex
		`Sx9%2fq%2bZ%26w%3c%22e%22%3e%5c%20%c3%a9%3d1%20%3fend%f0%9f%94%91`, // lower-case %xx
	} {
		if got := s.String("x " + form + " y"); strings.Contains(got, form) {
			t.Errorf("%q got through: %q", form, got)
		}
	}
}
