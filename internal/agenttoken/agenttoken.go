// Package agenttoken is the rule for the secret a sweep's coordinator and
// its agents share (AGENTS_TOKEN, AGENTS_TOKEN_FILE, `ceiling agent
// --token-file`): surrounding white space, such as a file's final
// newline, is not part of it, and it is at least MinBytes long.
//
// It is a leaf so that the knobs (harness/knob) check AGENTS_TOKEN by the
// same rule, with the same words, as the agents' protocol
// (harness/agents.ParseToken) without linking that protocol; the agents'
// package wraps the checked text in its own Token, which never prints.
package agenttoken

import (
	"fmt"
	"strings"
)

// MinBytes is the shortest token accepted. A proof is computable offline
// from one handshake, so the token must be too long to guess: 16 bytes
// of a random token (`head -c 32 /dev/urandom | base64`) are.
const MinBytes = 16

// Check is the token in text, trimmed of surrounding white space, or an
// error naming source (where text came from) when it is too short.
func Check(source, text string) (string, error) {
	t := strings.TrimSpace(text)
	if len(t) < MinBytes {
		return "", fmt.Errorf("%s: the token is %d bytes, want at least %d (a random one: head -c 32 /dev/urandom | base64)", source, len(t), MinBytes)
	}
	return t, nil
}
