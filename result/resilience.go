package result

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// RoleResilience is the point FAULT runs after the sweep, at the
// headline's rung: one server of a multi-server target is killed (or
// frozen) partway through the window. It measures whether the others
// kept serving their clients, not a ceiling: its errors are the fault's,
// and it is never a ceiling, a headline or a noise floor.
const RoleResilience = "resilience"

// Resilience verdicts (Fault.Verdict).
const (
	// ResilienceHeld: every other server stayed up, and every one that
	// served clients delivered at least ResilienceDeliveredPct of what it
	// owed them after the fault.
	ResilienceHeld = "held"
	// ResilienceDegraded: a survivor went down or under-delivered.
	ResilienceDegraded = "degraded"
	// ResilienceCannotConclude: the fault or its evidence is missing
	// (the point failed, the signal was not sent, nothing was owed after
	// it, the shares are missing). Never read as held.
	ResilienceCannotConclude = "cannot_conclude"
)

// ResilienceDeliveredPct is the share of deliveries owed after the fault
// each surviving server's clients must get: seed 003's "the others must
// keep receiving 100%", less the at-most-once bus's in-flight loss.
const ResilienceDeliveredPct = 99.9

// Fault is what FAULT did to a resilience point, and what it found.
type Fault struct {
	Kind     string  `json:"kind"` // kill | stop
	Server   string  `json:"server"`
	Fraction float64 `json:"fraction"` // of the window, as asked
	// Sent: the signal was delivered; AtNs is when, from the window's
	// start (the generator's marker). Error says why it was not.
	Sent  bool   `json:"sent"`
	AtNs  int64  `json:"at_ns"`
	Error string `json:"error,omitempty"`
	// SplitAtNs is where the generator split each server's accounting
	// (summary.fanout.split_at_ns): Before and After are by publish time.
	SplitAtNs int64 `json:"split_at_ns"`
	// Servers are every server of the target, in boot order.
	Servers []FaultServer `json:"servers"`
	Verdict string        `json:"verdict"` // held | degraded | cannot_conclude
	Reason  string        `json:"reason"`
}

// FaultServer is one server of a resilience point.
type FaultServer struct {
	Name    string `json:"name"`
	Faulted bool   `json:"faulted,omitempty"` // the one FAULT named
	// Up: after the window, the process was alive and its ready probe
	// answered (a faulted server's is recorded too: a frozen one is
	// alive but does not answer). Why not, in UpReason.
	Up       bool   `json:"server_up"`
	UpReason string `json:"up_reason,omitempty"`
	// Share is its clients' share of the point (the scenario's
	// summary.<block>.servers entry for its URL); nil for a server no
	// client connected to (a cluster's bus).
	Share *wire.ServerShare `json:"share,omitempty"`
}

// Judge sets f's verdict: held only with the signal sent, every survivor
// up, and every survivor with clients owed deliveries after the fault and
// given at least ResilienceDeliveredPct of them.
func (f *Fault) Judge(pointFailed string) {
	f.Verdict, f.Reason = f.judge(pointFailed)
}

func (f *Fault) judge(pointFailed string) (string, string) {
	switch {
	case pointFailed != "":
		return ResilienceCannotConclude, "the point failed: " + pointFailed
	case !f.Sent:
		return ResilienceCannotConclude, "the fault was not applied: " + f.Error
	}
	var bad, none []string
	served := 0
	for _, s := range f.Servers {
		if s.Faulted {
			continue
		}
		if !s.Up {
			bad = append(bad, fmt.Sprintf("%s went down (%s)", s.Name, s.UpReason))
		}
		if s.Share == nil {
			continue
		}
		served++
		a := s.Share.After
		switch {
		case a == nil || a.DeliveredPct == nil:
			none = append(none, s.Name)
		case *a.DeliveredPct < ResilienceDeliveredPct:
			bad = append(bad, fmt.Sprintf("%s's clients got %s of what they were owed after the fault (%d of %d)", s.Name, a.PctText(), a.Delivered, a.Expected))
		}
	}
	switch {
	case len(bad) > 0:
		return ResilienceDegraded, strings.Join(bad, "; ")
	case served == 0:
		return ResilienceCannotConclude, "no surviving server had clients: nothing measured what the others kept serving"
	case len(none) > 0:
		return ResilienceCannotConclude, fmt.Sprintf("nothing was owed after the fault to the clients of %s: no publish accepted after it reached them, so nothing measured what they kept receiving (a closed-loop publisher waiting on a frozen server's reply publishes nothing more; else a longer window or an earlier fraction)", strings.Join(none, ", "))
	}
	return ResilienceHeld, fmt.Sprintf("every other server stayed up, and each one's clients got at least %.1f%% of what they were owed after the fault", ResilienceDeliveredPct)
}

// WriteResilience is the resilience points' own section of the table:
// the fault, then each server's clients, drops and delivered % before
// and after it, and the verdict.
func WriteResilience(b *strings.Builder, r *Result) error {
	for _, p := range r.Curve {
		f := p.Fault
		if p.Role != RoleResilience || f == nil {
			continue
		}
		when := "not sent: " + f.Error
		if f.Sent {
			when = fmt.Sprintf("at %v of the %v window", time.Duration(f.AtNs).Round(time.Millisecond), time.Duration(r.Config.DurationNs).Round(time.Millisecond))
		}
		fmt.Fprintf(b, "\nresilience (point %d, batch %d, %d connections): %s %s %s\n", p.Index, p.Batch, p.Connections, f.Kind, f.Server, when)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "server\tconns\tdropped\tpublishes (failed)\tdelivered before\tafter\tup\t")
		for _, s := range f.Servers {
			name := s.Name
			if s.Faulted {
				name += " (" + f.Kind + ")"
			}
			up := "yes"
			if !s.Up {
				up = "no"
			}
			if s.Share == nil {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\t\n", name, up)
				continue
			}
			sh := s.Share
			before, after := "-", "-"
			if sh.Before != nil {
				before = sh.Before.PctText()
			}
			if sh.After != nil {
				after = sh.After.PctText()
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d (%d)\t%s\t%s\t%s\t\n", name, sh.Connections, sh.Dropped, sh.Publishes, sh.PublishFailures, before, after, up)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		// What the shares' table cannot show: every failure by its class,
		// and deliveries beyond those owed (which a delivered percentage
		// hides, capped at 100%).
		if p.Errors > 0 {
			fmt.Fprintf(b, "errors: %d (%s)\n", p.Errors, reasonsText(p.ErrorsByReason))
		}
		if d := wire.DuplicatesOf(p.Scenario); d > 0 {
			fmt.Fprintf(b, "duplicates: %d deliveries beyond those owed (an event delivered twice, or one whose publish was counted as failed)\n", d)
		}
		fmt.Fprintf(b, "resilience: %s: %s\n", Phrase(f.Verdict), f.Reason)
	}
	return nil
}

// reasonsText is errors by reason, most first (then by name): "publish
// 3, other 1"; "by reason unknown" for a document without them.
func reasonsText(by map[string]int64) string {
	if len(by) == 0 {
		return "by reason unknown"
	}
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(by[b], by[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, by[k])
	}
	return strings.Join(parts, ", ")
}
