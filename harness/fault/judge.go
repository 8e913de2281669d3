package fault

import "github.com/ceiling-bench/ceiling/result"

// Judge gives a resilience point p its verdict: never clean (its errors
// are the fault's), judged on its record f; one without a record cannot
// conclude.
func Judge(p *result.Point, f *result.Fault) {
	p.Clean = false
	if f == nil {
		f = &result.Fault{Error: "no fault record"}
	}
	f.Judge(p.FailReason)
	p.Fault = f
}
