package pusher

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Names of the authentication query parameters.
const (
	ParamKey       = "auth_key"
	ParamTimestamp = "auth_timestamp"
	ParamVersion   = "auth_version"
	ParamBodyMD5   = "body_md5"
	ParamSignature = "auth_signature"

	// AuthVersion is the only signing version Pusher defines.
	AuthVersion = "1.0"
)

// Sign returns a copy of query with the authentication parameters added:
// auth_key, auth_timestamp (ts, Unix seconds), auth_version, body_md5 when
// body is non-empty, and auth_signature. query itself is not modified; an
// auth_signature already in it is replaced.
func Sign(method, path string, query url.Values, key, secret string, ts int64, body []byte) url.Values {
	q := make(url.Values, len(query)+5)
	for k, v := range query {
		q[k] = append([]string(nil), v...)
	}
	q.Del(ParamSignature)
	q.Set(ParamKey, key)
	q.Set(ParamTimestamp, strconv.FormatInt(ts, 10))
	q.Set(ParamVersion, AuthVersion)
	if len(body) > 0 {
		q.Set(ParamBodyMD5, BodyMD5(body))
	} else {
		q.Del(ParamBodyMD5)
	}
	q.Set(ParamSignature, Signature(secret, StringToSign(method, path, q)))
	return q
}

// BodyMD5 is the lowercase hex MD5 of a request body.
func BodyMD5(body []byte) string {
	sum := md5.Sum(body)
	return hex.EncodeToString(sum[:])
}

// StringToSign builds "METHOD\nPATH\nQUERY" where QUERY is every parameter
// except auth_signature, keys lowercased, sorted by key, joined as k=v with
// '&' and not URL-escaped (the spec signs the raw values).
func StringToSign(method, path string, query url.Values) string {
	type kv struct{ k, v string }
	pairs := make([]kv, 0, len(query))
	for k, vs := range query {
		lk := strings.ToLower(k)
		if lk == ParamSignature {
			continue
		}
		for _, v := range vs {
			pairs = append(pairs, kv{lk, v})
		}
	}
	// Stable on key only would leave repeated keys in map order; sort by value too.
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	b.WriteString(strings.ToUpper(method))
	b.WriteByte('\n')
	b.WriteString(path)
	b.WriteByte('\n')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// Signature is the lowercase hex HMAC-SHA256 of s keyed with secret.
func Signature(secret, s string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}
