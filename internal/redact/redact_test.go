package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	s := New("hunter22-long", "", "hunter22-longer-still")
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (empty ignored)", s.Len())
	}
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{"--secret=hunter22-long", "--secret=REDACTED"},
		{"a hunter22-long b hunter22-long", "a REDACTED b REDACTED"},
		// The longer secret is masked whole, not as the shorter one plus
		// a visible tail.
		{"x hunter22-longer-still y", "x REDACTED y"},
		{"hunter22-lon", "hunter22-lon"},
	}
	for _, tt := range tests {
		if got := s.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := s.Strings([]string{"hunter22-long", "ok"}); !reflect.DeepEqual(got, []string{"REDACTED", "ok"}) {
		t.Errorf("Strings = %q", got)
	}
	if s.Strings(nil) != nil {
		t.Error("Strings(nil) is not nil")
	}
	var nilSet *Set
	if nilSet.String("x") != "x" || nilSet.Len() != 0 || nilSet.Contains([]byte("x")) {
		t.Error("a nil Set is not an empty set")
	}
}

func TestAddAfterUse(t *testing.T) {
	s := New("first-secret")
	_ = s.String("first-secret")
	s.Add("second-secret")
	if got := s.String("first-secret second-secret"); got != "REDACTED REDACTED" {
		t.Errorf("after Add: %q", got)
	}
}

func TestContains(t *testing.T) {
	s := New(`quote"and\back<tag>`, "plain-secret")
	doc, _ := json.Marshal(map[string]string{"log_tail": `config: quote"and\back<tag>`})
	if !s.Contains(doc) {
		t.Errorf("Contains misses the JSON-escaped secret in %s", doc)
	}
	if !s.Contains([]byte("x plain-secret y")) {
		t.Error("Contains misses a plain secret")
	}
	if s.Contains([]byte("plain-secre")) {
		t.Error("Contains finds a secret that is not there")
	}
	if New().Contains([]byte("anything")) {
		t.Error("an empty set contains something")
	}
}

func TestConcurrent(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sec := fmt.Sprintf("secret-number-%d", i)
			s.Add(sec)
			if got := s.String("<" + sec + ">"); got != "<REDACTED>" {
				t.Errorf("String = %q", got)
			}
			_ = s.Contains([]byte(sec))
		}(i)
	}
	wg.Wait()
	if s.Len() != 8 {
		t.Errorf("Len = %d", s.Len())
	}
}

func TestFromEnviron(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"GITHUB_TOKEN=ghp_abc",
		"db_password=pw1",
		"MY_PASSWD=pw2",
		"APP_SECRET=",
		"STRIPE_API_KEY=sk",
		"SSH_PRIVATE_KEY=pk",
		"AWS_CREDENTIALS=cr",
		"TOKEN_FILE=/run/token", // where, not what
		"HOME=/root",
		"BROKEN",
		"X_APIKEY=k=v",
	}
	want := []string{"ghp_abc", "pw1", "pw2", "sk", "pk", "cr", "k=v"}
	if got := FromEnviron(env); !reflect.DeepEqual(got, want) {
		t.Errorf("FromEnviron = %q, want %q", got, want)
	}
}

func TestFromArgsAndArgs(t *testing.T) {
	tests := []struct {
		argv, secrets, masked []string
	}{
		{
			argv:    []string{"bin/refserver", "--addr", "127.0.0.1:1", "--secret", "s"},
			secrets: []string{"s"},
			masked:  []string{"bin/refserver", "--addr", "127.0.0.1:1", "--secret", Mask},
		},
		{
			argv:    []string{"srv", "-token=t=1", "--app-secret=as", "--api-key", "k", "--password"},
			secrets: []string{"t=1", "as", "k"},
			masked:  []string{"srv", "-token=" + Mask, "--app-secret=" + Mask, "--api-key", Mask, "--password"},
		},
		{
			// A flag value that looks like a flag is not taken; a file
			// flag names where the secret is.
			argv:    []string{"srv", "--secret", "--verbose", "--token-file", "/run/t", "--url", "secret"},
			secrets: nil,
			masked:  []string{"srv", "--secret", "--verbose", "--token-file", "/run/t", "--url", "secret"},
		},
		{
			argv:    []string{"--SECRET_KEY", "abc", "--", "--secret", "z"},
			secrets: []string{"abc", "z"},
			masked:  []string{"--SECRET_KEY", Mask, "--", "--secret", Mask},
		},
	}
	for _, tt := range tests {
		if got := FromArgs(tt.argv); !reflect.DeepEqual(got, tt.secrets) {
			t.Errorf("FromArgs(%q) = %q, want %q", tt.argv, got, tt.secrets)
		}
		if got := (*Set)(nil).Args(tt.argv); !reflect.DeepEqual(got, tt.masked) {
			t.Errorf("Args(%q) = %q, want %q", tt.argv, got, tt.masked)
		}
	}
	// Args also masks known secrets elsewhere, and leaves argv alone.
	argv := []string{"srv", "--conf=user:long-secret-1@host", "--secret", "x"}
	got := New("long-secret-1").Args(argv)
	if want := []string{"srv", "--conf=user:REDACTED@host", "--secret", Mask}; !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if argv[3] != "x" {
		t.Error("Args modified its input")
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"secret": true, "client-secret": true, "GITHUB_TOKEN": true, "auth-token": true,
		"password": true, "api_key": true, "apikey": true, "private-key": true,
		"credentials": true, "key": false, "app-id": false, "token-file": false,
		"secrets-dir": false, "addr": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
	if strings.Contains(Mask, "secret") {
		t.Error("the mask must not look like a secret")
	}
}

// TestEncodedFormsMasked: a server that prints its secret base64-encoded
// (alone, or inside a longer encoded string at any offset, padded or
// not, either alphabet), hex-dumped, URL-encoded or JSON-escaped twice
// has it masked, and Contains finds each form.
func TestEncodedFormsMasked(t *testing.T) {
	const secret = "app-s3cret/+value?&"
	s := New(secret)
	b64 := func(enc *base64.Encoding, v string) string { return enc.EncodeToString([]byte(v)) }
	j := jsonEscaped(`{"secret": "` + secret + `"}`)
	for i, leak := range []string{
		b64(base64.StdEncoding, secret),
		b64(base64.RawURLEncoding, secret),
		b64(base64.StdEncoding, "user:"+secret),     // Basic auth: offset 5
		b64(base64.URLEncoding, "ab"+secret+"tail"), // offset 2
		b64(base64.StdEncoding, "abc"+secret),       // offset 0 after a group
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
		url.QueryEscape(secret),
		url.PathEscape(secret),
		jsonEscaped(j),
	} {
		line := "config: " + leak + " end"
		got := s.String(line)
		if !strings.Contains(got, Mask) || !s.Contains([]byte(line)) {
			t.Errorf("%q: String gave %q, Contains %v", leak, got, s.Contains([]byte(line)))
		}
		// What is left of a base64 encoding (the first five) is its
		// neighbours' characters and at most two at each edge of the
		// secret: never enough to decode it.
		if rest := strings.NewReplacer("config: ", "", " end", "", Mask, "").Replace(got); i < 5 && len(rest) > 8+len("user:")*4/3+len("tail")*4/3+2 {
			t.Errorf("%q: %q left", leak, rest)
		}
	}
	if got := s.String("ordinary text, base64 aGVsbG8gd29ybGQ= and hex 68656c6c6f"); strings.Contains(got, Mask) {
		t.Errorf("masked ordinary text: %q", got)
	}
}
