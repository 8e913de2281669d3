package verdict

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// recorded is one point as a real sweep wrote it (testdata/README.md says
// which, and which are left out and why).
type recorded struct {
	Source  string       `json:"source"`  // the document it was copied from
	Version string       `json:"version"` // its meta.version
	Point   result.Point `json:"point"`
}

// outcomeOf is the Outcome a recorded point was judged from, as far as
// the document keeps it: both sides' CPUs (attribution included), the
// generator's evidence (generator_self), and the summary's figures that
// the point copies. What the point does not keep is taken as the clean
// case the point implies: every connection of its rung open, none
// dropped. The loop's mode is not recorded; an open loop is the one that
// recorded schedule lag or late sends, the evidence only it reports.
func outcomeOf(p result.Point) Outcome {
	out := Outcome{ServerCPU: p.ServerCPU, Servers: p.Servers, GeneratorCPU: p.GeneratorCPU, ServerMetrics: p.ServerMetrics,
		StartedAt: p.StartedAt}
	if p.Status == result.StatusFailed {
		out.FailReason, out.LogTail = p.FailReason, p.LogTail
		return out
	}
	s := load.Summary{Mode: "closed", ThroughputPerS: p.ThroughputPerS, Latency: p.LatencyNs, Errors: p.Errors,
		Saturated: p.Saturated, ConnectionsRequested: p.Connections, ConnectionsOpen: p.Connections,
		Blocks: p.Scenario, Drop: p.Drop}
	if g := p.Generator; g.ScheduleLag.Count > 0 || g.ScheduleLagP99 > 0 || g.LateSendsFrac > 0 {
		s.Mode = "open"
	}
	out.Load = &load.Result{Summary: s, Generator: p.Generator}
	return out
}

// TestRecorded: every recorded point, its Outcome rebuilt from what its
// document kept, gets the verdict it was recorded with — the verdict, its
// reason word for word, and the clean, contended and lower-bound flags.
// A change of the rule that changes a recorded verdict fails here, and
// the change is then the rule's to justify, not the table's to follow.
func TestRecorded(t *testing.T) {
	b, err := os.ReadFile("testdata/points.json")
	if err != nil {
		t.Fatal(err)
	}
	var rs []recorded
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rs {
		want := r.Point
		t.Run(fmt.Sprintf("%s#%d", r.Source, want.Index), func(t *testing.T) {
			k := result.PointKey{Batch: want.Batch, Connections: want.Connections, Rep: want.Rep}
			got := Point(want.Index, want.Role, k, outcomeOf(want), DefaultThresholds)
			if got.Status != want.Status || got.Verdict != want.Verdict {
				t.Errorf("status %s verdict %s, recorded %s %s", got.Status, got.Verdict, want.Status, want.Verdict)
			}
			if got.VerdictReason != want.VerdictReason {
				t.Errorf("reason\n got  %s\n want %s", got.VerdictReason, want.VerdictReason)
			}
			if got.Clean != want.Clean || got.Contended != want.Contended || got.LowerBound != want.LowerBound {
				t.Errorf("clean %v contended %v lower bound %v, recorded %v %v %v",
					got.Clean, got.Contended, got.LowerBound, want.Clean, want.Contended, want.LowerBound)
			}
			if got.ThroughputPerS != want.ThroughputPerS || got.Errors != want.Errors || got.Saturated != want.Saturated {
				t.Errorf("figures %v/s, %d errors, saturated %v; recorded %v/s, %d, %v",
					got.ThroughputPerS, got.Errors, got.Saturated, want.ThroughputPerS, want.Errors, want.Saturated)
			}
		})
		kind := want.Verdict
		if want.Contended {
			kind += ", contended"
		}
		if want.Saturated {
			kind += ", saturated"
		}
		if want.Errors > 0 {
			kind += ", errors"
		}
		seen[kind]++
	}
	// The table is only worth what it covers: a quiet server-saturated
	// point, contended points of both verdicts, a generator that fell
	// behind (a lower bound), an open loop at its in-flight limit, a point
	// with errors.
	for _, kind := range []string{
		result.VerdictServerSaturated, result.VerdictServerSaturated + ", contended",
		result.VerdictNeither, result.VerdictNeither + ", contended",
		result.VerdictBoth + ", saturated", result.VerdictNeither + ", errors",
	} {
		if seen[kind] == 0 {
			t.Errorf("no recorded point is %s (have %v)", kind, seen)
		}
	}
}
