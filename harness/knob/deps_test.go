package knob

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestKnobsLinkOnlyWhatDecides: the knobs parse and check what the user
// gave, and link only what that takes: the result document's types, the
// generator's contract (internal/wire: its limits, the I/O patterns, the
// source addresses, the scenarios registered), CPU lists
// (internal/cpuset, not pinning, which starts processes), the rule for
// AGENTS_TOKEN (internal/agenttoken, not the agents' protocol, which the
// harness hands the token to), the objective's language, and the
// standard library's pure part with what the checks need beyond it (net
// for AGENTS_LISTEN's address, the token's entropy). Never the generator
// (load), the agents, os/exec (GENERATOR is found on $PATH by lookPath)
// or net/http.
func TestKnobsLinkOnlyWhatDecides(t *testing.T) {
	testenv.ImportsOnly(t, testenv.Module+"harness/knob", append(testenv.Ours("result", "internal/wire", "internal/cpuset",
		"internal/agenttoken", "internal/objective", "internal/stats", "internal/redact", "internal/argv"),
		"net", "context", "runtime/cgo", "crypto", "crypto/cipher", "crypto/subtle", "crypto/fips140",
		"crypto/rand", "hash", "math/big", "math/rand")...)
	testenv.ImportsNone(t, testenv.Module+"harness/knob",
		testenv.Bans(testenv.Ours("load", "harness/agents", "pinning"), testenv.Machinery(), []string{"os/exec", "net/http"})...)
}
