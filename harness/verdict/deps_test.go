package verdict

import (
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestVerdictIsPure: the verdict is a function of what a point measured.
//
// It links only what it reads: the result document's types (result), the
// generator's document and an agent's part of a point (internal/wire,
// where load.Result and agents.Agent are defined), the objective's
// language, and what those bring (the statistics, the redaction and
// argv readers), with the standard library's pure part. Never the
// generator (load), the agents, what boots, samples or scrapes, and no
// os/exec or net/http (the allowlist keeps all of them out; the ban
// names the ones issue 48 freed it from). Its own files are held to
// more: they import nothing that does I/O or starts a process, and read
// no clock.
func TestVerdictIsPure(t *testing.T) {
	testenv.ImportsOnly(t, testenv.Module+"harness/verdict",
		testenv.Ours("result", "internal/wire", "internal/objective", "internal/stats", "internal/redact", "internal/argv")...)
	testenv.ImportsNone(t, testenv.Module+"harness/verdict",
		testenv.Bans(testenv.Ours("load", "harness/agents"), testenv.Machinery(), []string{"os/exec", "net/http"})...)

	testenv.FilesArePure(t)
}
