package pusher

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// MaxClockSkew is how far auth_timestamp may be from the server's clock,
// either way, before a request is refused (Pusher uses 600 s).
const MaxClockSkew = 600 * time.Second

// Kinds of verification failure; a *VerifyError wraps exactly one, so
// callers test with errors.Is.
var (
	ErrMissingParam   = errors.New("missing parameter")
	ErrBadParam       = errors.New("malformed parameter")
	ErrUnknownKey     = errors.New("unknown auth_key")
	ErrStaleTimestamp = errors.New("auth_timestamp too far from server time")
	ErrBadBodyMD5     = errors.New("body_md5 does not match the body")
	ErrBadSignature   = errors.New("auth_signature does not match")
)

// VerifyError says which parameter failed and why.
type VerifyError struct {
	Kind   error  // one of the Err* values above
	Param  string // the query parameter at fault
	Detail string // extra context, never the secret or the expected signature
}

func (e *VerifyError) Error() string {
	s := fmt.Sprintf("%s: %v", e.Param, e.Kind)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func (e *VerifyError) Unwrap() error { return e.Kind }

// Verify checks a signed REST request: every auth parameter present,
// auth_key equal to key, auth_version 1.0, auth_timestamp within
// MaxClockSkew of now, body_md5 matching body (required when body is
// non-empty), and auth_signature. It returns a *VerifyError or nil.
// It is VerifyQuery followed by VerifyBody.
func Verify(method, path string, query url.Values, key, secret string, now time.Time, body []byte) error {
	if err := VerifyQuery(method, path, query, key, secret, now); err != nil {
		return err
	}
	return VerifyBody(query, body)
}

// VerifyQuery checks everything of a signed request that does not need the
// body: every auth parameter present, auth_key, auth_version,
// auth_timestamp and auth_signature. The signature covers body_md5, so a
// server can refuse a forged request before it reads a byte of the body,
// and then check the body it reads with VerifyBody.
func VerifyQuery(method, path string, query url.Values, key, secret string, now time.Time) error {
	for _, p := range []string{ParamKey, ParamTimestamp, ParamVersion, ParamSignature} {
		if query.Get(p) == "" {
			return &VerifyError{Kind: ErrMissingParam, Param: p}
		}
	}
	if got := query.Get(ParamKey); got != key {
		return &VerifyError{Kind: ErrUnknownKey, Param: ParamKey, Detail: strconv.Quote(got)}
	}
	if v := query.Get(ParamVersion); v != AuthVersion {
		return &VerifyError{Kind: ErrBadParam, Param: ParamVersion, Detail: "want 1.0, got " + strconv.Quote(v)}
	}
	ts, err := strconv.ParseInt(query.Get(ParamTimestamp), 10, 64)
	if err != nil {
		return &VerifyError{Kind: ErrBadParam, Param: ParamTimestamp, Detail: "not an integer of Unix seconds"}
	}
	if skew := now.Sub(time.Unix(ts, 0)); skew > MaxClockSkew || skew < -MaxClockSkew {
		return &VerifyError{Kind: ErrStaleTimestamp, Param: ParamTimestamp,
			Detail: fmt.Sprintf("off by %s, limit %s", skew.Round(time.Second), MaxClockSkew)}
	}
	want := Signature(secret, StringToSign(method, path, query))
	if !hmac.Equal([]byte(want), []byte(query.Get(ParamSignature))) {
		return &VerifyError{Kind: ErrBadSignature, Param: ParamSignature}
	}
	return nil
}

// VerifyBody checks body against the body_md5 of a query VerifyQuery
// accepted: required when the body is not empty, and equal to its MD5.
func VerifyBody(query url.Values, body []byte) error {
	if len(body) > 0 || query.Get(ParamBodyMD5) != "" {
		got := query.Get(ParamBodyMD5)
		if got == "" {
			return &VerifyError{Kind: ErrMissingParam, Param: ParamBodyMD5, Detail: "required with a non-empty body"}
		}
		if got != BodyMD5(body) {
			return &VerifyError{Kind: ErrBadBodyMD5, Param: ParamBodyMD5}
		}
	}
	return nil
}
