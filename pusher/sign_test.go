package pusher

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The worked example of Pusher's "Generating authentication signatures"
// (HTTP API reference): app 3, POST /apps/3/events.
const (
	exampleKey    = "278d425bdf160c739803"
	exampleSecret = "7ad3773142a6692b25b8"
	examplePath   = "/apps/3/events"
	exampleTS     = 1353088179
	exampleBody   = `{"name":"foo","channels":["project-3"],"data":"{\"some\":\"data\"}"}`
	exampleMD5    = "ec365a775a4cd0599faeb73354201b6f"
	exampleSig    = "da454824c97ba181a32ccc17a72625ba02771f50b50e1e7430e47a1f3f457e6c"
)

func TestSignWorkedExample(t *testing.T) {
	got := Sign("POST", examplePath, nil, exampleKey, exampleSecret, exampleTS, []byte(exampleBody))
	want := url.Values{
		"auth_key":       {exampleKey},
		"auth_timestamp": {"1353088179"},
		"auth_version":   {"1.0"},
		"body_md5":       {exampleMD5},
		"auth_signature": {exampleSig},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sign (-want +got):\n%s", diff)
	}
}

func TestStringToSignWorkedExample(t *testing.T) {
	q := url.Values{
		"auth_version":   {"1.0"},
		"body_md5":       {exampleMD5},
		"auth_key":       {exampleKey},
		"auth_timestamp": {"1353088179"},
		"auth_signature": {"ignored"},
	}
	got := StringToSign("post", examplePath, q)
	want := "POST\n/apps/3/events\nauth_key=278d425bdf160c739803&auth_timestamp=1353088179&auth_version=1.0&body_md5=ec365a775a4cd0599faeb73354201b6f"
	if got != want {
		t.Errorf("StringToSign:\ngot  %q\nwant %q", got, want)
	}
}

func TestStringToSignLowercasesAndDoesNotEscape(t *testing.T) {
	q := url.Values{"Name": {"Something else"}, "auth_key": {"foo"}}
	got := StringToSign("GET", "/x", q)
	want := "GET\n/x\nauth_key=foo&name=Something else"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSignDoesNotModifyInput(t *testing.T) {
	in := url.Values{"info": {"user_count"}}
	_ = Sign("GET", "/apps/3/channels", in, "k", "s", 1, nil)
	if diff := cmp.Diff(url.Values{"info": {"user_count"}}, in); diff != "" {
		t.Errorf("input changed (-want +got):\n%s", diff)
	}
}

func TestSignEmptyBodyHasNoMD5(t *testing.T) {
	q := Sign("GET", "/apps/3/channels", nil, "k", "s", 1, nil)
	if _, ok := q[ParamBodyMD5]; ok {
		t.Errorf("body_md5 present for an empty body: %v", q)
	}
	if err := Verify("GET", "/apps/3/channels", q, "k", "s", time.Unix(1, 0), nil); err != nil {
		t.Errorf("Verify of a signed empty-body request: %v", err)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(exampleTS, 0)
	body := []byte(exampleBody)
	signed := func() url.Values {
		return Sign("POST", examplePath, nil, exampleKey, exampleSecret, exampleTS, body)
	}
	tests := []struct {
		name      string
		query     func() url.Values
		body      []byte
		now       time.Time
		secret    string
		wantKind  error
		wantParam string
	}{
		{name: "worked example", query: signed, body: body, now: now, secret: exampleSecret},
		{name: "within skew", query: signed, body: body, now: now.Add(599 * time.Second), secret: exampleSecret},
		{name: "missing key", query: func() url.Values { q := signed(); q.Del(ParamKey); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrMissingParam, wantParam: ParamKey},
		{name: "missing signature", query: func() url.Values { q := signed(); q.Del(ParamSignature); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrMissingParam, wantParam: ParamSignature},
		// Signed for an empty body (no body_md5), sent with one.
		{name: "missing body_md5", query: func() url.Values {
			return Sign("POST", examplePath, nil, exampleKey, exampleSecret, exampleTS, nil)
		}, body: body, now: now, secret: exampleSecret, wantKind: ErrMissingParam, wantParam: ParamBodyMD5},
		// body_md5 removed after signing: the signature no longer matches,
		// found before the body is looked at.
		{name: "body_md5 stripped", query: func() url.Values { q := signed(); q.Del(ParamBodyMD5); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrBadSignature, wantParam: ParamSignature},
		{name: "wrong key", query: func() url.Values { q := signed(); q.Set(ParamKey, "other"); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrUnknownKey, wantParam: ParamKey},
		{name: "wrong version", query: func() url.Values { q := signed(); q.Set(ParamVersion, "2.0"); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrBadParam, wantParam: ParamVersion},
		{name: "timestamp not a number", query: func() url.Values { q := signed(); q.Set(ParamTimestamp, "soon"); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrBadParam, wantParam: ParamTimestamp},
		{name: "stale", query: signed, body: body, now: now.Add(601 * time.Second), secret: exampleSecret,
			wantKind: ErrStaleTimestamp, wantParam: ParamTimestamp},
		{name: "from the future", query: signed, body: body, now: now.Add(-601 * time.Second), secret: exampleSecret,
			wantKind: ErrStaleTimestamp, wantParam: ParamTimestamp},
		{name: "body changed", query: signed, body: []byte(exampleBody + " "), now: now, secret: exampleSecret,
			wantKind: ErrBadBodyMD5, wantParam: ParamBodyMD5},
		{name: "wrong secret", query: signed, body: body, now: now, secret: "nope",
			wantKind: ErrBadSignature, wantParam: ParamSignature},
		{name: "extra param not signed", query: func() url.Values { q := signed(); q.Set("socket_id", "1.2"); return q },
			body: body, now: now, secret: exampleSecret, wantKind: ErrBadSignature, wantParam: ParamSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify("POST", examplePath, tt.query(), exampleKey, tt.secret, tt.now, tt.body)
			if tt.wantKind == nil {
				if err != nil {
					t.Fatalf("Verify: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantKind) {
				t.Fatalf("Verify: %v, want kind %v", err, tt.wantKind)
			}
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify: %T, want *VerifyError", err)
			}
			if ve.Param != tt.wantParam {
				t.Errorf("Param = %q, want %q", ve.Param, tt.wantParam)
			}
		})
	}
}
