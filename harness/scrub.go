package harness

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/harness/secrets"
)

// scrub redacts a point's files once its processes are gone (index 0:
// a warm arm's logs, when it stops): what a server or the generator
// printed (a config with a secret in it) stays in the work dir only
// while they run. A file it cannot redact is a warning for the drain.
func scrub(e *procEnv, index int, paths []string) {
	if e.opts.Secrets.Len() == 0 {
		return
	}
	for _, path := range paths {
		if err := secrets.RedactFile(path, e.opts.Secrets); err != nil {
			e.late.warn(fmt.Sprintf("point %d: could not redact %s: %v", index, path, err))
		}
	}
}
