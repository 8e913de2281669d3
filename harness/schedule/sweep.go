package schedule

import "github.com/ceiling-bench/ceiling/result"

// SweepPlan is what a single-target sweep's schedule is made of: the
// knobs that choose its points.
type SweepPlan struct {
	Batches []int                 // BATCH_LADDER
	Conns   func(batch int) []int // each batch's connection ladder
	Reps    int                   // REPS
	// HeadlineBatch is the batch whose largest rung the resilience point
	// falls back to when there is no headline.
	HeadlineBatch int
	Bisect        bool // SEARCH=bisect: a search per batch in place of the ladder
	Objective     bool // an OBJECTIVE is set: the search bisects on it
	Headroom      bool // HEADROOM_PROBE: a probe after the A-A repeat
	Fault         bool // FAULT: a resilience point last
}

// The stages of a single-target sweep, in order.
const (
	stageMeasure    = iota // the ladder in Order, or the search
	stageRepeat            // the A-A repeat of the headline
	stageHeadroom          // the headroom probe
	stageResilience        // FAULT's point
	stageDone
)

// Sweep is a single-target sweep's schedule: the ladder in Order (or
// SEARCH=bisect's search), then the A-A repeat of the headline peak, the
// headroom probe and the resilience point.
type Sweep struct {
	plan     SweepPlan
	order    []result.PointKey // the ladder's, in Order
	at       int               // the next of order
	search   *bisection        // SEARCH=bisect; nil on the ladder
	stage    int
	headline result.Headline   // the last observed
	ran      []result.PointKey // every point in the curve
}

// NewSweep is the schedule of a sweep planned as p.
func NewSweep(p SweepPlan) *Sweep {
	s := &Sweep{plan: p}
	if p.Bisect {
		s.search = newBisection(p.Batches, p.Conns, p.Reps, p.Objective)
	} else {
		s.order = Order(p.Batches, p.Conns, p.Reps)
	}
	return s
}

// Next takes what the points it gave last measured (nothing on the first
// call) and returns the point to measure next; false: the sweep is done.
//
// The measure stage runs the ladder in Order, every rung whatever it
// measured (a failed rung is a point of the curve like any other), or the
// search, which reads each point before choosing the next and stops at a
// lost one. Then, when the headline is clean, its A-A repeat (rep REPS)
// and, with HEADROOM_PROBE, the headroom probe (rep REPS+1) at the same
// rung; last, with FAULT, the resilience point (ResilienceKey).
func (s *Sweep) Next(last ...Observed) (Point, bool) {
	s.Observe(last...)
	for {
		switch s.stage {
		case stageMeasure:
			if s.search != nil {
				if p, ok := s.search.next(); ok {
					return p, true
				}
			} else if s.at < len(s.order) {
				s.at++
				return Point{Role: result.RoleSweep, Key: s.order[s.at-1]}, true
			}
			s.stage = stageRepeat
		case stageRepeat:
			s.stage = stageHeadroom
			if !s.headline.Clean {
				s.stage = stageResilience // no repeat, and nothing to probe
				continue
			}
			return Point{Role: result.RoleAARepeat, Key: s.repeatKey(0)}, true
		case stageHeadroom:
			s.stage = stageResilience
			if s.plan.Headroom {
				return Point{Role: result.RoleHeadroom, Key: s.repeatKey(1)}, true
			}
		case stageResilience:
			s.stage = stageDone
			if s.plan.Fault {
				k := ResilienceKey(s.headline, s.plan.HeadlineBatch, s.plan.Conns(s.plan.HeadlineBatch), s.ran)
				return Point{Role: result.RoleResilience, Key: k}, true
			}
		default:
			return Point{}, false
		}
	}
}

// Observe takes what the points Next gave last measured without asking
// for another: what a sweep that stops (its context ended) does with the
// point that finished, so Notes count it. Next(last...) is Observe(last...)
// and then the next point.
func (s *Sweep) Observe(last ...Observed) {
	for _, o := range last {
		s.headline = o.Headline
		if !o.Lost {
			s.ran = append(s.ran, o.Key)
		}
		if s.search != nil && s.stage == stageMeasure {
			s.search.observe(o)
		}
	}
}

// repeatKey is the headline's rung at rep REPS+extra.
func (s *Sweep) repeatKey(extra int) result.PointKey {
	return result.PointKey{Batch: s.headline.Batch, Connections: s.headline.Connections, Rep: s.plan.Reps + extra}
}

// Notes sum up each batch's search for Result.Notes (SEARCH=bisect: how
// many points, between which counts, how each rep's search ended); none
// on the ladder.
func (s *Sweep) Notes() []string {
	if s.search == nil {
		return nil
	}
	return s.search.notes()
}

// ResilienceKey is where FAULT's point runs: the headline's rung, or
// without a headline the headline batch's largest rung (of its ladder
// conns), its rep after every other at that rung among ran (the points in
// the curve).
func ResilienceKey(h result.Headline, headlineBatch int, conns []int, ran []result.PointKey) result.PointKey {
	k := result.PointKey{Batch: h.Batch, Connections: h.Connections}
	if k.Connections == 0 {
		k.Batch = headlineBatch
		for _, c := range conns {
			k.Connections = max(k.Connections, c)
		}
	}
	for _, p := range ran {
		if p.Batch == k.Batch && p.Connections == k.Connections {
			k.Rep = max(k.Rep, p.Rep+1)
		}
	}
	return k
}
