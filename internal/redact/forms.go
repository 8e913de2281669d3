package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
)

// Forms are the ways a secret is commonly written other than as itself,
// each masked wherever the secret is (Set.String, Set.Contains): a
// server that logs its config base64-encoded, hex-dumped, URL-encoded or
// JSON-escaped (once or twice) leaks it as surely as in clear.
//
// Base64 does not encode a secret the same way wherever it stands: inside
// a longer encoded string (an "Authorization: Basic" header of
// "user:secret") its bytes start at one of three offsets from a 3-byte
// group. For each offset and both alphabets, the form is the run of
// characters that only the secret's bits make (the one or two characters
// at each edge also hold a neighbour's bits, and are left); with padding
// or without, that run is in every encoding that contains the secret.
//
// Not covered: a secret split over two lines or writes, compressed,
// encrypted or otherwise transformed. Log tails are not published by
// default for that reason (docs/targets.md, "Secrets").
func Forms(x string) []string {
	if x == "" {
		return nil
	}
	seen := map[string]bool{x: true}
	var out []string
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			add(base64Core(enc, x, k))
		}
	}
	add(hex.EncodeToString([]byte(x)))
	add(strings.ToUpper(hex.EncodeToString([]byte(x))))
	add(url.QueryEscape(x))
	add(url.PathEscape(x))
	j := jsonEscaped(x)
	add(j)
	add(jsonEscaped(j))
	return out
}

// base64Core is the part of enc's encoding of x, standing k bytes past a
// 3-byte boundary, that only x's bits make: characters i with 6i >= 8k
// and 6i+6 <= 8(k+len(x)).
func base64Core(enc *base64.Encoding, x string, k int) string {
	b := make([]byte, k+len(x))
	copy(b[k:], x)
	s := enc.EncodeToString(b)
	lo := (8*k + 5) / 6
	hi := 8 * (k + len(x)) / 6
	if hi-lo < MinLen {
		return "" // too short to mask without masking ordinary text
	}
	return s[lo:hi]
}
