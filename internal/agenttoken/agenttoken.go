// Package agenttoken is the rule for the secret a sweep's coordinator and
// its agents share (AGENTS_TOKEN, AGENTS_TOKEN_FILE, `ceiling agent
// --token-file`): surrounding white space, such as a file's final
// newline, is not part of it; it is at least MinBytes long and shows at
// least MinBits of estimated entropy (EstimateBits); New makes one.
//
// It is a leaf so that the knobs (harness/knob) check AGENTS_TOKEN by the
// same rule, with the same words, as the agents' protocol
// (harness/agents.ParseToken) without linking that protocol; the agents'
// package wraps the checked text in its own Token, which never prints.
package agenttoken

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
)

// MinBytes is the shortest token accepted.
const MinBytes = 16

// MinBits is the least estimated entropy a token must show. A challenge
// hands any peer a proof computed from the token, against which guesses
// can be tested offline at the speed of HMAC-SHA256: a token must be too
// random to guess, not only long.
const MinBits = 128

// NewBytes is the random bytes of a token New makes (256 bits).
const NewBytes = 32

// Make is how the error messages tell a user to make a token.
const Make = "ceiling agent --new-token, or head -c 32 /dev/urandom | base64"

// Check is the token in text, trimmed of surrounding white space, or an
// error naming source (where text came from) when it is too short or
// shows too little entropy.
func Check(source, text string) (string, error) {
	t := strings.TrimSpace(text)
	if len(t) < MinBytes {
		return "", fmt.Errorf("%s: the token is %d bytes, want at least %d (make one: %s)", source, len(t), MinBytes, Make)
	}
	if bits := EstimateBits(t); bits < MinBits {
		return "", fmt.Errorf("%s: the token shows about %.0f bits of entropy, want at least %d: it repeats itself or draws on few characters (make one: %s)", source, math.Floor(bits), MinBits, Make)
	}
	return t, nil
}

// New is a fresh random token of NewBytes, in unpadded URL-safe base64
// (it goes in a file, a variable or a Secret as it is).
func New() string {
	b := make([]byte, NewBytes)
	if _, err := rand.Read(b); err != nil {
		panic("agenttoken: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// The alphabets EstimateBits knows, smallest first: a token is taken as
// drawn from the first that holds every one of its characters.
var alphabets = []struct {
	size  int
	holds func(r rune) bool
}{
	{10, func(r rune) bool { return '0' <= r && r <= '9' }},
	{16, func(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' }},
	{16, func(r rune) bool { return '0' <= r && r <= '9' || 'A' <= r && r <= 'F' }},
	{26, func(r rune) bool { return 'a' <= r && r <= 'z' }},
	{26, func(r rune) bool { return 'A' <= r && r <= 'Z' }},
	{36, func(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'z' }},
	{36, func(r rune) bool { return '0' <= r && r <= '9' || 'A' <= r && r <= 'Z' }},
	{62, alnum},
	{64, func(r rune) bool { return alnum(r) || strings.ContainsRune("+/=", r) }},
	{64, func(r rune) bool { return alnum(r) || strings.ContainsRune("-_=", r) }},
	{95, func(r rune) bool { return ' ' <= r && r <= '~' }},
}

func alnum(r rune) bool {
	return '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
}

// MaxEstimated is how many of a token's characters EstimateBits reads.
const MaxEstimated = 256

// MinRepeat is the shortest run that EstimateBits takes as a repetition.
const MinRepeat = 4

// EstimateBits estimates a token's entropy as if its characters were
// drawn at random, one at a time, from the smallest common alphabet that
// holds them all (digits, hex, one case of letters, letters and digits,
// base64, printable ASCII; any other character: 95), giving no credit for
// repetition: a run of MinRepeat or more characters that repeats an
// earlier part of the token (overlapping it, as LZ77 does) counts as one
// character. So "aaaa…" counts 2 characters, "abcabcabc…" 4, and 32
// random bytes in base64 about 43 of 6 bits each. It knows no words:
// English text scores as random printable text; New's tokens need no
// such trust. Sixteen random bytes in hex (32 characters of 4 bits) sit
// at MinBits exactly, and fall below it in the rare draw that repeats 4
// characters (about 1 in 160, by calculation): write 32 bytes.
//
// Only the first MaxEstimated characters are looked at: the search for
// repeats is quadratic, and a 256 KiB token file cost a minute of CPU;
// MaxEstimated random characters are far past MinBits in any alphabet.
func EstimateBits(t string) float64 {
	rs := []rune(t)
	if len(rs) > MaxEstimated {
		rs = rs[:MaxEstimated]
	}
	size := 95
	for _, a := range alphabets {
		all := true
		for _, r := range rs {
			if !a.holds(r) {
				all = false
				break
			}
		}
		if all {
			size = a.size
			break
		}
	}
	return float64(effectiveLength(rs)) * math.Log2(float64(size))
}

// effectiveLength counts rs's characters, each run of MinRepeat or more
// that repeats an earlier part of rs (starting before it, possibly
// overlapping it) as one.
func effectiveLength(rs []rune) int {
	n := 0
	for i := 0; i < len(rs); n++ {
		longest := 0
		for j := range i {
			k := 0
			for i+k < len(rs) && rs[j+k] == rs[i+k] {
				k++
			}
			longest = max(longest, k)
		}
		if longest >= MinRepeat {
			i += longest
		} else {
			i++
		}
	}
	return n
}
