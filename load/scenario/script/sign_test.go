package script

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
)

// The Pusher REST signature, written in the file's own terms: the query
// carries the key (from the environment), {unix_s} and {body_md5}; the
// signing string is "{method}\n{path}\n{query}"; the signature goes in
// the query parameter auth_signature. On the worked example of Pusher's
// HTTP API reference it gives that example's signature, and refserver's
// verifier (pusher.Verify) accepts the request.
func TestSignPusherWorkedExample(t *testing.T) {
	const (
		key    = "278d425bdf160c739803"
		secret = "7ad3773142a6692b25b8"
		ts     = 1353088179
		body   = `{"name":"foo","channels":["project-3"],"data":"{\"some\":\"data\"}"}`
		sig    = "da454824c97ba181a32ccc17a72625ba02771f50b50e1e7430e47a1f3f457e6c"
	)
	t.Setenv("PUSHER_TEST_KEY", key)
	file := strings.Replace(base, `"rate": 5,`, `"rate": 5, "http": {
		"url": "{http_url}/apps/3/events?auth_key={env:PUSHER_TEST_KEY}&auth_timestamp={unix_s}&auth_version=1.0&body_md5={body_md5}",
		"sign": {"sign": "hmac_sha256", "key_env": "PUSHER_TEST_SECRET", "query": "auth_signature", "string": "{method}\n{path}\n{query}"}},`, 1)
	spec, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	h := spec.Roles[0].Sends[0].HTTP
	var vs vars
	vs.strs[varHTTPURL] = []byte("http://127.0.0.1:1")
	raw, got, err := h.render(&vs, []byte(body), map[string][]byte{"PUSHER_TEST_SECRET": []byte(secret)}, ts)
	if err != nil {
		t.Fatal(err)
	}
	if got != sig {
		t.Errorf("signature %s, want the worked example's %s", got, sig)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("auth_signature") != sig {
		t.Errorf("URL %s carries no auth_signature=%s", raw, sig)
	}
	if err := pusher.Verify("POST", u.Path, u.Query(), key, secret, time.Unix(ts, 0), []byte(body)); err != nil {
		t.Errorf("pusher.Verify: %v", err)
	}
	// The query's canonical forms, raw and escaped.
	q := url.Values{"b": {"x y"}, "a": {"2", "1"}}
	if got := string(canonicalQuery(nil, q, false)); got != "a=1&a=2&b=x y" {
		t.Errorf("canonical query %q", got)
	}
	if got := string(canonicalQuery(nil, q, true)); got != "a=1&a=2&b=x%20y" {
		t.Errorf("escaped canonical query %q", got)
	}
}

// A field path reads inside a JSON string with @json: Pusher's events
// carry their data as a string of JSON.
func TestLookupThroughJSONString(t *testing.T) {
	msg := []byte(`{"event":"e","channel":"c","data":"{\"ts\":1234,\"by\":\"x\"}"}`)
	for _, c := range []struct {
		path string
		want string
		ok   bool
	}{
		{"data@json.ts", "1234", true},
		{"data@json.by", `"x"`, true},
		{"data@json.none", "", false},
		{"event@json.ts", "", false}, // a string, but not of JSON
		{"channel", `"c"`, true},
	} {
		v, ok := lookup(msg, strings.Split(c.path, "."))
		if ok != c.ok || string(v) != c.want {
			t.Errorf("lookup %s = %q, %v; want %q, %v", c.path, v, ok, c.want, c.ok)
		}
	}
}

// {env:NAME} reads a variable in every template: the connect URL, the
// client id, a send's id and message, an HTTP URL and headers. An unset
// one is a bad file naming it (never a value), and EnvNames lists each
// name once for the sweep's pass_env check.
func TestEnvInEveryTemplate(t *testing.T) {
	t.Setenv("SCRIPT_ENV_A", "a1")
	t.Setenv("SCRIPT_ENV_B", "b{2}")
	file := strings.NewReplacer(
		`"client_id": "c{conn}"`, `"client_id": "c{conn}-{env:SCRIPT_ENV_A}"`,
		`"url": "{url}/ws"`, `"url": "{url}/ws?t={env:SCRIPT_ENV_A}"`,
		`"id": "{client}-{seq}"`, `"id": "{client}-{seq}-{env:SCRIPT_ENV_B}"`,
		`"p": "{payload}"`, `"p": "{payload}", "k": "{env:SCRIPT_ENV_B}"`,
	).Replace(base)
	spec, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var vs vars
	vs.ints[varConn] = 3
	if got := spec.ClientID.String(&vs); got != "c3-a1" {
		t.Errorf("client_id %q", got)
	}
	vs.strs[varURL] = []byte("ws://h")
	if got := spec.Connect.URL.String(&vs); got != "ws://h/ws?t=a1" {
		t.Errorf("connect.url %q", got)
	}
	vs.strs[varClient], vs.ints[varSeq] = []byte("c3"), 7
	if got := spec.Roles[0].Sends[0].ID.String(&vs); got != "c3-7-b{2}" {
		t.Errorf("id %q, want the variable's braces kept literal", got)
	}
	if got := string(spec.Roles[0].Sends[0].Message.Append(nil, &vs)); !strings.Contains(got, `"k":"b{2}"`) {
		t.Errorf("message %s", got)
	}
	if strings.Join(spec.EnvNames, ",") != "SCRIPT_ENV_A,SCRIPT_ENV_B" {
		t.Errorf("EnvNames %v", spec.EnvNames)
	}
	if _, err := Parse([]byte(strings.Replace(file, "SCRIPT_ENV_A}", "SCRIPT_ENV_UNSET}", 1))); err == nil || !strings.Contains(err.Error(), "SCRIPT_ENV_UNSET is not set") || strings.Contains(err.Error(), "a1") {
		t.Errorf("unset variable: %v", err)
	}
}
