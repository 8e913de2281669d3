package main

import (
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// judgeCheck reads init's quick sweep and says whether the target boots
// and answers, which is all init's check asks. It is not the ceiling: a
// point that ran on contended CPUs answered all the same.
//
//   - No point ran: the target does not work. The first failure is named
//     with the tail of its log, where the cause is ("Cannot find module").
//   - Every point that ran had errors: the target answers wrongly.
//   - Every point that ran was clean, or unclean only because other work
//     or the hypervisor took the CPUs: the target works. On a busy machine
//     init says so and that its figures are not ceilings.
//   - Otherwise (a saturated or capped first point, say) the target works
//     and the sweep's table says why there is no headline: init passes and
//     points there. A point that failed or had errors beside others that ran
//     clean is named.
//
// failed is whether the sweep exited non-zero.
func judgeCheck(r *result.Result, failed bool) (ok bool, msg string) {
	var ran, withErrors []result.Point
	contended := 0
	var firstFail *result.Point
	for i, p := range r.Curve {
		switch {
		case p.Status != result.StatusOK:
			if firstFail == nil {
				firstFail = &r.Curve[i]
			}
		case p.Errors > 0:
			withErrors = append(withErrors, p)
		default:
			ran = append(ran, p)
			if p.Contended {
				contended++
			}
		}
	}
	switch {
	case len(ran) == 0 && len(withErrors) == 0:
		if firstFail == nil {
			return false, "the quick sweep ran no point: the target was not tried"
		}
		msg := fmt.Sprintf("the target does not work: none of the quick sweep's %d points ran; point %d failed: %s", len(r.Curve), firstFail.Index, firstFail.FailReason)
		if tail := strings.TrimSpace(firstFail.LogTail); tail != "" {
			msg += "\nthe end of its log:\n  " + strings.ReplaceAll(tail, "\n", "\n  ")
		}
		return false, msg
	case len(ran) == 0:
		p := withErrors[0]
		return false, fmt.Sprintf("the target answers with errors: point %d (batch %d, %d connections) had %d (see the table above and docs/targets.md)", p.Index, p.Batch, p.Connections, p.Errors)
	}
	works := fmt.Sprintf("the target boots and answers: %d of %d points ran, with no errors", len(ran), len(r.Curve))
	if len(withErrors) > 0 {
		works += fmt.Sprintf("; point %d had %d errors", withErrors[0].Index, withErrors[0].Errors)
	}
	if firstFail != nil {
		works += fmt.Sprintf("; point %d failed: %s", firstFail.Index, firstFail.FailReason)
	}
	switch {
	case !failed:
		return true, works
	case contended > 0:
		return true, fmt.Sprintf("%s; %d ran on CPUs that other work or the hypervisor took, so this machine gave no clean figure (a busy machine, not the target)", works, contended)
	default:
		return true, works + "; the quick sweep found no clean headline (the table above says why)"
	}
}
