package schedule

import (
	"fmt"
	"strconv"

	"github.com/ceiling-bench/ceiling/result"
)

// SearchTotal is the most points a SEARCH=bisect sweep can run before
// the A-A repeat: every batch's SearchBudget, for every rep (the progress
// line's N; the search usually stops sooner).
func SearchTotal[L ~[]int](batches []int, conns func(batch int) L, reps int) int {
	n := 0
	for _, b := range batches {
		n += SearchBudget(conns(b))
	}
	return n * reps
}

// bisection runs a searcher per batch for each rep in turn: reps the
// outer loop, and within a rep one step of every unfinished batch's
// search in turn (the ladder's interleaving).
type bisection struct {
	batches   []int
	conns     func(batch int) []int
	reps      int
	objective bool

	rep    int
	ss     []*searcher // this rep's, nil between reps
	at     int         // the next searcher to ask in this round
	active bool        // a searcher gave a point in this round
	out    *searcher   // the one whose point is being measured
	over   bool        // a point was lost: the search stops where it is

	points map[int]int      // batch -> points recorded
	ends   map[int][]string // batch -> how each finished rep's search ended
}

func newBisection(batches []int, conns func(batch int) []int, reps int, objective bool) *bisection {
	return &bisection{batches: batches, conns: conns, reps: reps, objective: objective,
		points: map[int]int{}, ends: map[int][]string{}}
}

// next is the search's next point; false: it is over.
func (b *bisection) next() (Point, bool) {
	for !b.over && b.rep < b.reps {
		if b.ss == nil {
			for _, batch := range b.batches {
				b.ss = append(b.ss, newSearcher(batch, b.rep, b.conns(batch), b.objective))
			}
			b.at, b.active = 0, false
		}
		for b.at < len(b.ss) {
			s := b.ss[b.at]
			b.at++
			c, phase, why, ok := s.Next()
			if !ok {
				continue
			}
			b.active, b.out = true, s
			return Point{Role: result.RoleSweep, Key: result.PointKey{Batch: s.batch, Connections: c, Rep: b.rep},
				Step: len(s.probes) + 1, Phase: phase, Reason: why}, true
		}
		if b.active {
			b.at, b.active = 0, false
			continue
		}
		for _, s := range b.ss {
			_, _, end, _ := s.Next()
			b.ends[s.batch] = append(b.ends[s.batch], end)
		}
		b.ss = nil
		b.rep++
	}
	return Point{}, false
}

// observe records what the point next gave measured. A lost point ends
// the search: the rep it was in has no end to note.
func (b *bisection) observe(o Observed) {
	s := b.out
	if s == nil {
		return
	}
	b.out = nil
	if o.Lost {
		b.over = true
		return
	}
	p := probe{conns: o.Key.Connections, failed: true}
	if !o.Failed {
		p = probe{conns: o.Key.Connections, thr: o.ThroughputPerS, good: o.Good}
	}
	s.Record(p)
	b.points[s.batch]++
}

// notes sum up each batch's search, for Result.Notes.
func (b *bisection) notes() []string {
	var ns []string
	for _, batch := range b.batches {
		if b.points[batch] > 0 {
			ns = append(ns, searchNote(batch, b.conns(batch), b.points[batch], b.ends[batch]))
		}
	}
	return ns
}

// searchNote sums up one batch's search.
func searchNote(batch int, l []int, points int, ends []string) string {
	s := fmt.Sprintf("SEARCH=bisect: batch %d: %d points between %d and %d connections (its ladder has %d rungs)", batch, points, l[0], top(l), len(l))
	for i, e := range ends {
		if len(ends) > 1 {
			s += "; rep " + strconv.Itoa(i)
		}
		s += ": " + e
	}
	return s
}

// top is a ladder's highest rung (0: an empty ladder).
func top(l []int) int {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}
