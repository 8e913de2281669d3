package knob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Ladder is a rung list of positive integers, written as in the Makefile:
// space- or comma-separated ("10 100 512" or "10,100,512"). It is a
// flag.Value. Rungs keep the order given but must be strictly increasing, so
// "the top of the ladder" means the last rung.
type Ladder []int

// ParseLadder parses a ladder; name is the knob it came from (BATCH_LADDER,
// --conns-ladder, ...) and is named in every error, unless it is empty
// (the caller names the knob, as the knob table's callers do).
func ParseLadder(name, s string) (Ladder, error) {
	l, err := parseLadder(s)
	if err != nil && name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return l, err
}

func parseLadder(s string) (Ladder, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty ladder %q (want positive integers such as \"10 100 512\")", s)
	}
	if err := checkRungCount(len(fields)); err != nil {
		return nil, err
	}
	l := make(Ladder, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("rung %q in %q is not a positive integer", f, s)
		}
		if len(l) > 0 && n <= l[len(l)-1] {
			return nil, fmt.Errorf("rungs must increase strictly, %d follows %d in %q", n, l[len(l)-1], s)
		}
		l = append(l, n)
	}
	return l, nil
}

func (l Ladder) String() string {
	parts := make([]string, len(l))
	for i, n := range l {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}

// Set implements flag.Value; the flag package prefixes the flag's name to
// the error.
func (l *Ladder) Set(s string) error {
	p, err := ParseLadder("ladder", s)
	if err != nil {
		return err
	}
	*l = p
	return nil
}

// Top is the last rung (0 for an empty ladder).
func (l Ladder) Top() int {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}

// Contains reports whether n is a rung.
func (l Ladder) Contains(n int) bool { return slices.Contains(l, n) }

// ConnsLadders maps a batch size to its connection ladder. As a flag.Value
// it takes repeated "BATCH=LADDER" (--conns-ladder 10=32,64,128), the flag
// form of CONNS_LADDER_<batch>.
type ConnsLadders map[int]Ladder

func (c ConnsLadders) String() string {
	keys := make([]int, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d=%s", k, strings.ReplaceAll(c[k].String(), " ", ","))
	}
	return strings.Join(parts, " ")
}

// Set implements flag.Value for one "BATCH=LADDER".
func (c ConnsLadders) Set(s string) error {
	b, lad, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want BATCH=LADDER such as 10=32,64,128, got %q", s)
	}
	batch, err := strconv.Atoi(strings.TrimSpace(b))
	if err != nil || batch <= 0 {
		return fmt.Errorf("batch %q in %q is not a positive integer", b, s)
	}
	l, err := ParseLadder("CONNS_LADDER_"+strconv.Itoa(batch), lad)
	if err != nil {
		return err
	}
	c[batch] = l
	return nil
}

// DefaultBatchLadder is the batch sizes swept by default: at 256 B records
// 2.5 KB, 25 KB, 128 KB, 256 KB and 1 MB of values per request.
var DefaultBatchLadder = Ladder{10, 100, 512, 1024, 4096}

// DefaultConnsLadder is the connection ladder for a batch size when
// CONNS_LADDER_<batch> is not set. Larger requests saturate at fewer
// connections, so the ladder slides down as the batch grows: 32..512 at
// batch 10, down to 4..64 at batch 4096, doubling each rung.
func DefaultConnsLadder(batch int) Ladder {
	switch {
	case batch <= 10:
		return Ladder{32, 64, 128, 256, 512}
	case batch <= 100:
		return Ladder{16, 32, 64, 128, 256}
	case batch <= 1024:
		return Ladder{8, 16, 32, 64, 128}
	default:
		return Ladder{4, 8, 16, 32, 64}
	}
}

// QuickBatchLadder is the quick sweep's batch sizes, for smoke tests.
var QuickBatchLadder = Ladder{10, 1024}

// QuickConnsLadder is the quick sweep's two-rung connection ladder for a
// batch size when CONNS_LADDER_<batch> is not set: the first two rungs of
// the default ladder, so any batch (a fanout batch, one from BATCH_LADDER)
// gets one.
func QuickConnsLadder(batch int) Ladder {
	return slices.Clone(DefaultConnsLadder(batch)[:2])
}

// checkRungs is the ladder's bound (MaxRungs), whichever layer set it.
func (l Ladder) checkRungs() error { return checkRungCount(len(l)) }

func checkRungCount(n int) error {
	if n > MaxRungs {
		return fmt.Errorf("%d rungs, at most %d: every rung is at least one point", n, MaxRungs)
	}
	return nil
}
