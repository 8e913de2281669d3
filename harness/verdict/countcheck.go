package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// checkCount sets the generator's throughput against the server's own
// counter series over the overlap of the window and its two metrics reads
// (result.CountCheck). The generator's count is what agents, which the
// harness does not control, can make up; the server's is not theirs.
//
// The two windows' edges differ by what was in flight: the server counts
// a message as it writes it, the generator as it arrives, and the after
// read also counts what was written after the window's end. inflight (a
// batch per connection) bounds that, and widens the tolerance by its
// share of the count: a large batch on few seconds has more in flight.
//
// The generator's rate is over its whole window (windowS), the server's
// over the overlap only: the part before the before read answered is
// counted by the generator alone. The rate there may differ from the
// rest's (a point's first milliseconds are not its average, least of all
// on stolen CPUs), so that share of the window widens the tolerance too:
// a before read that took a tenth of a 1 s window cannot vouch for the
// count closer than that tenth.
// maxUncovered is the largest share of the window the server's count may
// miss (the before read answering late) and still be checked.
const maxUncovered = 0.25

func checkCount(series string, overlapS, windowS float64, sm *result.ServerMetrics, generatorPerS float64, inflight int64) *result.CountCheck {
	c := &result.CountCheck{Series: series, GeneratorPerS: generatorPerS, Tolerance: result.CountTolerance, OverlapS: overlapS, Verdict: result.CountsUnchecked}
	if sm == nil {
		c.Reason = "the server's metrics were not read"
		return c
	}
	var s *result.MetricSeries
	for i := range sm.Series {
		if sm.Series[i].Name == series {
			s = &sm.Series[i]
			break
		}
	}
	switch {
	case sm.Error != "":
		c.Reason = "reading the server's metrics failed: " + sm.Error
	case s == nil:
		c.Reason = fmt.Sprintf("the server's metrics have no series %s (metrics.counts)", series)
	case s.Reset:
		c.Reason = series + " went down during the window (the server restarted it)"
	case s.Delta == nil:
		c.Reason = series + " was not in both reads"
	case overlapS <= 0:
		c.Reason = "the before read answered after the window had ended"
	case windowS > 0 && (windowS-overlapS)/windowS > maxUncovered:
		// The allowance below would grow with what is missing until any
		// figure agreed: past a quarter, the check has lost its evidence.
		c.Reason = fmt.Sprintf("the before read answered %.2fs into the %.2fs window: the server's count covers too little of it to check the generator's (at most %.0f%% may be missing)",
			windowS-overlapS, windowS, 100*maxUncovered)
	}
	if c.Reason != "" {
		return c
	}
	c.ServerPerS = *s.Delta / overlapS
	if *s.Delta > 0 {
		c.Tolerance += math.Min(1, float64(inflight) / *s.Delta)
	}
	if windowS > overlapS {
		c.Tolerance += (windowS - overlapS) / windowS
	}
	switch {
	case c.ServerPerS == 0 && generatorPerS == 0:
		c.Ratio = 1
	case c.ServerPerS == 0:
		c.Ratio = math.Inf(1)
	default:
		c.Ratio = generatorPerS / c.ServerPerS
	}
	c.Verdict = result.CountsAgree
	if math.IsInf(c.Ratio, 0) || math.Abs(c.Ratio-1) > c.Tolerance {
		c.Verdict = result.CountsDisagree
	}
	if math.IsInf(c.Ratio, 0) {
		c.Ratio = 0 // JSON has no infinity; ServerPerS 0 says it
	}
	return c
}

// countDisagreement is the failure of a point whose count the server's
// contradicts, naming who reported it.
func countDisagreement(p result.Point) string {
	who := "the generator"
	if len(p.Agents) > 0 {
		var ids []string
		for _, a := range p.Agents {
			ids = append(ids, fmt.Sprint(a.Index))
		}
		who = "the agents (" + strings.Join(ids, ", ") + "), merged,"
	}
	c := p.CountCheck
	if c.ServerPerS == 0 {
		return fmt.Sprintf("counts disagree: %s reported %.0f/s, and the server's own %s counted nothing over the same %.2fs of the window: the point's figure is not the server's",
			who, c.GeneratorPerS, c.Series, c.OverlapS)
	}
	return fmt.Sprintf("counts disagree: %s reported %.0f/s, the server's own %s counted %.0f/s over the same %.2fs of the window (ratio %.3f, more than %.0f%% from 1): the point's figure is not the server's",
		who, c.GeneratorPerS, c.Series, c.ServerPerS, c.OverlapS, c.Ratio, 100*c.Tolerance)
}
